// File: tools/child_process.h
//
// A child process whose stdout the parent reads line by line, and may kill:
// how `kaaslog demo` runs its crash child (this same executable, re-run
// through /proc/self/exe) and SIGKILLs it mid-stream. The child's stdin is
// /dev/null and its stderr is the parent's.
//
// Thread-safety: thread-compatible.

#ifndef KAAS_TOOLS_CHILD_PROCESS_H_
#define KAAS_TOOLS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace kaas::tools {

class ChildProcess {
 public:
  // Starts `argv[0]` with `argv` (argv[0] is also the path run).
  static absl::StatusOr<ChildProcess> Spawn(
      const std::vector<std::string>& argv);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // Kills (SIGKILL) and reaps a child still running.
  ~ChildProcess();

  pid_t pid() const { return pid_; }

  // The next complete line of the child's stdout (without the newline), or
  // nullopt at the end of its output (it exited, or closed stdout).
  // kDeadlineExceeded if no line arrives within `timeout`.
  absl::StatusOr<std::optional<std::string>> ReadLine(absl::Duration timeout);

  // Sends SIGKILL (no-op if already reaped).
  void Kill();

  // Waits for the child to exit; returns its wait status (waitpid).
  absl::StatusOr<int> Wait();

 private:
  ChildProcess(pid_t pid, int stdout_fd) : pid_(pid), stdout_fd_(stdout_fd) {}

  pid_t pid_ = -1;  // -1 once reaped
  int stdout_fd_ = -1;
  std::string buffered_;
  bool eof_ = false;
};

// The child's side of the pipe: writes whole lines to stdout with one
// write(2) each, so that lines of concurrent threads never interleave and a
// line is in the pipe the moment it is written (a parent that SIGKILLs the
// child later reads every line written before). Thread-safe.
class LineWriter {
 public:
  // False once stdout is closed (the parent stopped listening).
  bool Write(absl::string_view line);

 private:
  absl::Mutex mu_;
};

// A description of a waitpid status: "exited with status 3", "killed by
// signal 9 (Killed)".
std::string DescribeWaitStatus(int status);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_CHILD_PROCESS_H_
