// Scenario (f): a consumer fetches the data set from offset 0 and writes
// every response to a loopback TCP socket that another thread drains,
// through the copy path (Read, then write(2) of the bytes) and through the
// zero-copy path (ReadRegions, then RecordRegions::SendTo: sendfile inside
// the engine), beside the raw sendfile(2) of the same segment files to the
// same kind of socket, each the median of three rounds.

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "bench/bench_engine.h"
#include "bench/data_set_child.h"
#include "bench/scenarios.h"
#include "fs/fs_util.h"

namespace kaas::bench {
namespace {

constexpr size_t kFetchMaxBytes = size_t{1} << 20;

absl::Status SocketError(absl::string_view what) {
  return absl::ErrnoToStatus(errno, what);
}

// A connected loopback TCP connection whose receiving end a thread drains,
// counting the bytes (what a client reading fetch responses does, minus the
// parsing).
class DrainedSocket {
 public:
  static absl::StatusOr<std::unique_ptr<DrainedSocket>> Open() {
    auto socket = std::unique_ptr<DrainedSocket>(new DrainedSocket());
    KAAS_RETURN_IF_ERROR(socket->Connect());
    socket->drainer_ = std::thread([raw = socket.get()] { raw->Drain(); });
    return socket;
  }

  ~DrainedSocket() {
    if (send_fd_ >= 0) ::close(send_fd_);
    if (drainer_.joinable()) drainer_.join();
    if (receive_fd_ >= 0) ::close(receive_fd_);
  }

  // The sending end (blocking).
  int fd() const { return send_fd_; }

  // Closes the sending end and returns the bytes the drainer received.
  uint64_t Finish() {
    ::close(send_fd_);
    send_fd_ = -1;
    drainer_.join();
    return received_.load();
  }

 private:
  DrainedSocket() = default;

  absl::Status Connect() {
    const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listener < 0) return SocketError("socket");
    sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof(address);
    absl::Status status = absl::OkStatus();
    if (::bind(listener, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
        ::listen(listener, 1) != 0 ||
        ::getsockname(listener, reinterpret_cast<sockaddr*>(&address),
                      &length) != 0) {
      status = SocketError("listen on 127.0.0.1");
    }
    if (status.ok()) {
      send_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (send_fd_ < 0 ||
          ::connect(send_fd_, reinterpret_cast<sockaddr*>(&address), length) !=
              0) {
        status = SocketError("connect to 127.0.0.1");
      }
    }
    if (status.ok()) {
      receive_fd_ = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (receive_fd_ < 0) status = SocketError("accept");
    }
    ::close(listener);
    return status;
  }

  void Drain() {
    std::string buffer(size_t{1} << 20, '\0');
    while (true) {
      const ssize_t got = ::recv(receive_fd_, buffer.data(), buffer.size(), 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return;
      received_.fetch_add(static_cast<uint64_t>(got));
    }
  }

  int send_fd_ = -1;
  int receive_fd_ = -1;
  std::atomic<uint64_t> received_{0};
  std::thread drainer_;
};

// write(2) of every byte of `bytes` to the blocking `fd`.
absl::Status WriteAll(int fd, const absl::Cord& bytes) {
  for (absl::string_view chunk : bytes.Chunks()) {
    while (!chunk.empty()) {
      const ssize_t wrote = ::write(fd, chunk.data(), chunk.size());
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote < 0) return SocketError("write to the socket");
      chunk.remove_prefix(static_cast<size_t>(wrote));
    }
  }
  return absl::OkStatus();
}

// The segment logs under `dir`, in offset order (the names sort so within
// one leader epoch, which the writer child keeps).
std::vector<std::string> SegmentLogsUnder(const std::string& dir) {
  std::vector<std::string> logs;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(dir, error)) {
    const std::string path = entry.path().string();
    if (entry.is_regular_file() && absl::EndsWith(path, ".log")) {
      logs.push_back(path);
    }
  }
  std::sort(logs.begin(), logs.end());
  return logs;
}

// The raw baseline: sendfile(2) of each file whole, in order.
absl::StatusOr<uint64_t> SendFilesRaw(const std::vector<std::string>& paths,
                                      int out_fd) {
  uint64_t total = 0;
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return SocketError(absl::StrCat("open ", path));
    struct stat st;
    absl::Status status = absl::OkStatus();
    if (::fstat(fd, &st) != 0)
      status = SocketError(absl::StrCat("stat ", path));
    off_t position = 0;
    while (status.ok() && position < st.st_size) {
      const ssize_t sent =
          ::sendfile(out_fd, fd, &position, st.st_size - position);
      if (sent < 0 && errno == EINTR) continue;
      if (sent <= 0) status = SocketError(absl::StrCat("sendfile ", path));
    }
    ::close(fd);
    KAAS_RETURN_IF_ERROR(status);
    total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

// Rounds per case (an odd number: the median is one of them).
constexpr int kRounds = 3;

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct Fetched {
  uint64_t bytes = 0;
  int64_t batches = 0;
  int64_t end_offset = 0;
  double seconds = 0;
};

// Fetches [0, high watermark) through `path` into `out_fd`.
absl::StatusOr<Fetched> FetchAll(StorageEngine& engine,
                                 const TopicPartition& tp, bool zero_copy,
                                 int out_fd) {
  KAAS_ASSIGN_OR_RETURN(const int64_t high_watermark, engine.HighWatermark(tp));
  Fetched fetched;
  const absl::Time start = absl::Now();
  while (fetched.end_offset < high_watermark) {
    int64_t next_offset;
    if (zero_copy) {
      KAAS_ASSIGN_OR_RETURN(
          RegionReadResult read,
          engine.ReadRegions(tp, fetched.end_offset, kFetchMaxBytes,
                             Isolation::kReadUncommitted));
      KAAS_ASSIGN_OR_RETURN(const uint64_t sent, read.records.SendTo(out_fd));
      if (sent != read.records.size()) {
        return absl::InternalError("a blocking socket took part of a send");
      }
      fetched.bytes += sent;
      fetched.batches += read.batches;
      next_offset = read.next_offset;
    } else {
      KAAS_ASSIGN_OR_RETURN(ReadResult read,
                            engine.Read(tp, fetched.end_offset, kFetchMaxBytes,
                                        Isolation::kReadUncommitted));
      KAAS_RETURN_IF_ERROR(WriteAll(out_fd, read.records));
      fetched.bytes += read.records.size();
      fetched.batches += read.batches;
      next_offset = read.next_offset;
    }
    if (next_offset <= fetched.end_offset) {
      return absl::InternalError(absl::StrCat(
          "the fetch at offset ", fetched.end_offset,
          " made no progress (high watermark ", high_watermark, ")"));
    }
    fetched.end_offset = next_offset;
  }
  fetched.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  return fetched;
}

}  // namespace

std::vector<BenchRow> RunFetchToSocket(const ScenarioContext& context,
                                       const BatchShape& shape,
                                       CacheState cache) {
  std::vector<BenchRow> rows(2);
  const char* const kPaths[] = {"copy", "zero-copy"};
  for (size_t i = 0; i < rows.size(); ++i) {
    rows[i].scenario = "f";
    rows[i].name = absl::StrCat("(f) ", shape.name, " ", CacheStateName(cache),
                                " ", kPaths[i]);
    rows[i].batch = std::string(shape.name);
    rows[i].cache = std::string(CacheStateName(cache));
    rows[i].path = kPaths[i];
  }
  const std::string dir = fs::JoinPath(
      context.root, absl::StrCat("f-", shape.name, "-", CacheStateName(cache)));
  const TopicPartition tp{std::string(kDataSetTopic), kBenchPartition};
  absl::Status status = [&]() -> absl::Status {
    KAAS_ASSIGN_OR_RETURN(ChildWriteReport written,
                          WriteClosedDataSet(context, dir, tp.topic, shape));
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                          OpenBenchEngine(dir, /*flush_interval_messages=*/0));
    KAAS_RETURN_IF_ERROR(engine->TakeOver(tp, kReopenEpoch).status());
    // Each round runs the raw baseline (the same files, the same socket
    // kind, the same cache state) and then both paths; a pass takes well
    // under a second warm, so each figure is the median of the rounds.
    const std::vector<std::string> logs = SegmentLogsUnder(dir);
    std::vector<double> sendfile_mb_per_s;
    std::vector<std::vector<double>> mb_per_s(rows.size());
    std::vector<std::vector<double>> batches_per_s(rows.size());
    for (int round = 0; round < kRounds; ++round) {
      {
        KAAS_RETURN_IF_ERROR(SyncFilesUnder(*context.fs, dir, cache));
        KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DrainedSocket> socket,
                              DrainedSocket::Open());
        const absl::Time start = absl::Now();
        KAAS_ASSIGN_OR_RETURN(const uint64_t sent,
                              SendFilesRaw(logs, socket->fd()));
        const uint64_t received = socket->Finish();
        const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
        if (received != sent) {
          return absl::InternalError(absl::StrCat(
              "raw sendfile: sent ", sent, " bytes, received ", received));
        }
        sendfile_mb_per_s.push_back(static_cast<double>(sent) / 1e6 / seconds);
      }
      for (size_t i = 0; i < rows.size(); ++i) {
        KAAS_RETURN_IF_ERROR(SyncFilesUnder(*context.fs, dir, cache));
        KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DrainedSocket> socket,
                              DrainedSocket::Open());
        KAAS_ASSIGN_OR_RETURN(
            Fetched fetched,
            FetchAll(*engine, tp, /*zero_copy=*/i == 1, socket->fd()));
        const uint64_t received = socket->Finish();
        if (fetched.end_offset != written.end_offset ||
            fetched.bytes != written.bytes || received != written.bytes) {
          rows[i].hwm_ok = false;
          return absl::DataLossError(absl::StrCat(
              rows[i].name, ": fetched ", fetched.bytes, " bytes up to offset ",
              fetched.end_offset, ", the socket received ", received,
              "; the child wrote ", written.bytes, " bytes up to offset ",
              written.end_offset));
        }
        mb_per_s[i].push_back(static_cast<double>(fetched.bytes) / 1e6 /
                              fetched.seconds);
        batches_per_s[i].push_back(static_cast<double>(fetched.batches) /
                                   fetched.seconds);
      }
    }
    for (size_t i = 0; i < rows.size(); ++i) {
      rows[i].hwm_ok = true;
      rows[i].mb_per_s = Median(mb_per_s[i]);
      rows[i].batches_per_s = Median(batches_per_s[i]);
      rows[i].sendfile_mb_per_s = Median(sendfile_mb_per_s);
    }
    return absl::OkStatus();
  }();
  // One failure fails both rows (they share the data set).
  BenchRow outcome;
  FinishCase(context, dir, std::move(status), &outcome);
  if (outcome.error.has_value()) {
    for (BenchRow& row : rows) row.error = outcome.error;
  }
  return rows;
}

}  // namespace kaas::bench
