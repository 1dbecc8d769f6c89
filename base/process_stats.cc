#include "base/process_stats.h"

#include <dirent.h>

#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace kaas {

int CurrentThreadCount() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest(line);
    if (absl::ConsumePrefix(&rest, "Threads:")) {
      int threads = -1;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &threads)) {
        return threads;
      }
      return -1;
    }
  }
  return -1;
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
