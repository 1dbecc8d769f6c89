// File: tools/progress.cc

#include "tools/progress.h"

#include <unistd.h>

#include <cstdio>
#include <utility>

#include "absl/strings/str_cat.h"

namespace kaas::tools {

Progress::Progress(std::string label, int64_t total, std::string unit,
                   absl::Duration interval)
    : label_(std::move(label)),
      total_(total),
      unit_(std::move(unit)),
      interval_(interval),
      in_place_(::isatty(STDERR_FILENO) == 1),
      thread_([this] { Report(); }) {}

Progress::~Progress() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void Progress::Report() {
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stop_), interval_)) {
    int64_t done = done_.load(std::memory_order_relaxed);
    std::string line = absl::StrCat("  ", label_, ": ", done);
    if (total_ > 0) {
      absl::StrAppend(&line, "/", total_, " ", unit_, " (", done * 100 / total_,
                      "%)");
    } else {
      absl::StrAppend(&line, " ", unit_);
    }
    std::fprintf(stderr, in_place_ ? "\r%s\033[K" : "%s\n", line.c_str());
    std::fflush(stderr);
    printed_in_place_ = in_place_;
  }
  if (printed_in_place_) std::fprintf(stderr, "\n");
}

}  // namespace kaas::tools
