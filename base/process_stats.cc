#include "base/process_stats.h"

#include <dirent.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace kaas {

namespace {

// The number at the start of the "<field>" line of /proc/self/status (for
// "VmRSS:" followed by "kB"), or -1 if it cannot be read.
int64_t StatusField(absl::string_view field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest(line);
    if (!absl::ConsumePrefix(&rest, field)) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, "kB");
    int64_t value = -1;
    if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &value)) {
      return value;
    }
    return -1;
  }
  return -1;
}

}  // namespace

int CurrentThreadCount() { return static_cast<int>(StatusField("Threads:")); }

int64_t CurrentResidentBytes() {
  const int64_t kib = StatusField("VmRSS:");
  return kib < 0 ? -1 : kib * 1024;
}

int CurrentOpenFileDescriptors() {
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count - 1;  // the descriptor opendir itself holds
}

}  // namespace kaas
