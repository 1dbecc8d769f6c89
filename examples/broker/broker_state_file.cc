// File: examples/broker/broker_state_file.cc

#include "examples/broker/broker_state_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kaas::broker {
namespace {

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(
      absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

// The contents of the file at `path`; *exists says whether there is one.
absl::StatusOr<std::string> ReadSmallFile(const std::string& path,
                                          bool* exists) {
  *exists = false;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::string();
    if (errno == ELOOP) {
      return absl::DataLossError(absl::StrCat(path, " is a symbolic link"));
    }
    return Errno("open", path);
  }
  *exists = true;
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return absl::DataLossError(absl::StrCat(path, " is not a regular file"));
  }
  char buffer[64];
  const ssize_t n = ::read(fd, buffer, sizeof(buffer));
  ::close(fd);
  if (n < 0) return Errno("read", path);
  return std::string(buffer, static_cast<size_t>(n));
}

absl::Status WriteDurably(const std::string& dir, const std::string& path,
                          const std::string& contents) {
  const std::string temp = path + ".tmp";
  ::unlink(temp.c_str());  // a crash leftover; unlink never follows links
  const int fd = ::open(
      temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("create", temp);
  const bool written = ::write(fd, contents.data(), contents.size()) ==
                           static_cast<ssize_t>(contents.size()) &&
                       ::fsync(fd) == 0;
  const int saved = errno;
  ::close(fd);
  errno = saved;
  if (!written) return Errno("write", temp);
  if (::rename(temp.c_str(), path.c_str()) != 0) return Errno("rename", temp);
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) return Errno("open", dir);
  const bool synced = ::fsync(dir_fd) == 0;
  ::close(dir_fd);
  if (!synced) return Errno("fsync", dir);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> ReadStateNumber(const std::string& dir,
                                                       const std::string& name,
                                                       int64_t max) {
  const std::string path = absl::StrCat(dir, "/", name);
  bool exists = false;
  absl::StatusOr<std::string> contents = ReadSmallFile(path, &exists);
  if (!contents.ok()) return contents.status();
  if (!exists) return std::optional<int64_t>();
  int64_t value = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(*contents), &value) ||
      value < 0 || value > max) {
    return absl::DataLossError(
        absl::StrCat(path, " does not hold a number in [0, ", max, "]: \"",
                     absl::CHexEscape(*contents), "\""));
  }
  return std::optional<int64_t>(value);
}

absl::Status WriteStateNumber(const std::string& dir, const std::string& name,
                              int64_t value) {
  return WriteDurably(dir, absl::StrCat(dir, "/", name),
                      absl::StrCat(value, "\n"));
}

}  // namespace kaas::broker
