// File: tools/child_process.cc

#include "tools/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

extern char** environ;

namespace kaas::tools {
namespace {

absl::Status ErrnoError(absl::string_view what, int error) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(error)));
}

}  // namespace

absl::StatusOr<ChildProcess> ChildProcess::Spawn(
    const std::vector<std::string>& argv) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoError("pipe", errno);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null",
                                   O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  int error = posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(),
                          environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (error != 0) {
    ::close(fds[0]);
    return ErrnoError(absl::StrCat("spawning ", argv[0]), error);
  }
  return ChildProcess(pid, fds[0]);
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)),
      buffered_(std::move(other.buffered_)),
      eof_(other.eof_) {}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    Kill();
    (void)Wait();
  }
  if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

absl::StatusOr<std::optional<std::string>> ChildProcess::ReadLine(
    absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    size_t newline = buffered_.find('\n');
    if (newline != std::string::npos) {
      std::string line = buffered_.substr(0, newline);
      buffered_.erase(0, newline + 1);
      return line;
    }
    if (eof_) {
      if (buffered_.empty()) return std::nullopt;
      // A last line without a newline (the child died mid-line).
      return std::exchange(buffered_, std::string());
    }
    absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(
          absl::StrCat("no output from child ", pid_, " within ",
                       absl::FormatDuration(timeout)));
    }
    pollfd poll_fd{stdout_fd_, POLLIN, 0};
    int ready = ::poll(&poll_fd, 1,
                       static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("poll", errno);
    }
    if (ready == 0) continue;
    char chunk[4096];
    ssize_t got = ::read(stdout_fd_, chunk, sizeof(chunk));
    if (got < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("reading the child's output", errno);
    }
    if (got == 0) {
      eof_ = true;
    } else {
      buffered_.append(chunk, static_cast<size_t>(got));
    }
  }
}

void ChildProcess::Kill() {
  if (pid_ > 0) ::kill(pid_, SIGKILL);
}

absl::StatusOr<int> ChildProcess::Wait() {
  if (pid_ <= 0) return absl::FailedPreconditionError("child already reaped");
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoError("waitpid", errno);
  }
  pid_ = -1;
  return status;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) {
    return absl::StrCat("exited with status ", WEXITSTATUS(status));
  }
  if (WIFSIGNALED(status)) {
    return absl::StrCat("killed by signal ", WTERMSIG(status), " (",
                        strsignal(WTERMSIG(status)), ")");
  }
  return absl::StrCat("wait status ", status);
}

bool LineWriter::Write(absl::string_view line) {
  absl::MutexLock lock(&mu_);
  size_t written = 0;
  while (written < line.size()) {
    ssize_t n =
        ::write(STDOUT_FILENO, line.data() + written, line.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace kaas::tools
