#include "bench/subprocess.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "glog/logging.h"

extern char** environ;

namespace kaas::bench {

absl::StatusOr<ChildOutcome> RunChild(const std::vector<std::string>& argv) {
  CHECK(!argv.empty());
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return absl::ErrnoToStatus(errno, "pipe2 for the child's stdout");
  }
  // dup2 onto fd 1 clears O_CLOEXEC there; the originals close at exec.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv)
    args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawn_error = ::posix_spawn(&pid, argv[0].c_str(), &actions,
                                        nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (spawn_error != 0) {
    ::close(pipe_fds[0]);
    return absl::ErrnoToStatus(spawn_error,
                               absl::StrCat("spawn \"", argv[0], "\""));
  }

  ChildOutcome outcome;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof(buffer));
    if (n > 0) {
      outcome.stdout_text.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;  // EOF, or an error: the child's exit status tells the rest
    }
  }
  ::close(pipe_fds[0]);

  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::ErrnoToStatus(
          errno, absl::StrCat("wait for \"", argv[0], "\" (pid ", pid, ")"));
    }
  }
  outcome.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                      : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                            : -1;
  return outcome;
}

}  // namespace kaas::bench
