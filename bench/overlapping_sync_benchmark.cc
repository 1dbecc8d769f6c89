// Would overlapping sync cycles on one partition help? A raw program of the
// shape of the (a) 1KiB P=64 row, no engine: P producer threads append
// 1 KiB records to ONE file and each waits until its record is durable; S
// sync threads, each with a descriptor of its own (overlapping fsyncs must
// not share one: a writeback error is reported to only one of them), loop:
// note the written end, fdatasync, mark everything below it durable. S=1 is
// the engine's shape today (one cycle per partition at a time); S>1 is
// what overlapping cycles would do. The 1-producer row is the raw
// single-file fdatasync rate the (a) ratios divide by.
//
//   bazel run --config=opt //bench:overlapping_sync_benchmark [-- DIR
//   [SECONDS]]

#include <fcntl.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "bench/group_commit_window.h"

namespace {

constexpr size_t kRecordBytes = 1024;

// Plain pthread primitives (a raw program): a broadcast to 64 waiters costs
// what it costs a C program.
struct Shared {
  std::mutex mu;
  int64_t written = 0;  // bytes in the file
  int64_t claimed = 0;  // the end a sync has started for
  int64_t durable = 0;  // the end known durable
  int64_t acks = 0;
  int64_t syncs = 0;
  bool stop = false;
  std::condition_variable appended;  // for the sync threads
  std::condition_variable synced;    // for the producers
};

using Rate = kaas::bench::GroupCommitRates;

Rate Run(const std::string& path, int producers, int syncers,
         absl::Duration window) {
  const int write_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (write_fd < 0) {
    std::perror(path.c_str());
    std::exit(1);
  }
  Shared shared;
  std::vector<std::thread> threads;
  for (int i = 0; i < syncers; ++i) {
    threads.emplace_back([&] {
      const int fd = ::open(path.c_str(), O_RDWR);
      while (true) {
        int64_t target;
        {
          std::unique_lock<std::mutex> lock(shared.mu);
          while (!shared.stop && shared.written <= shared.claimed) {
            shared.appended.wait(lock);
          }
          if (shared.stop) break;
          target = shared.claimed = shared.written;
        }
        (void)::fdatasync(fd);
        std::lock_guard<std::mutex> lock(shared.mu);
        ++shared.syncs;
        if (target > shared.durable) shared.durable = target;
        shared.synced.notify_all();
      }
      ::close(fd);
    });
  }
  for (int i = 0; i < producers; ++i) {
    threads.emplace_back([&] {
      const std::string record(kRecordBytes, 'x');
      std::unique_lock<std::mutex> lock(shared.mu);
      while (!shared.stop) {
        // One writer at a time (the partition lock), so `written` is the
        // file's size.
        const int64_t end = shared.written + kRecordBytes;
        if (::pwrite(write_fd, record.data(), record.size(), shared.written) !=
            static_cast<ssize_t>(record.size())) {
          std::perror("pwrite");
          std::exit(1);
        }
        shared.written = end;
        shared.appended.notify_all();
        while (!shared.stop && shared.durable < end) shared.synced.wait(lock);
        ++shared.acks;
      }
    });
  }
  const Rate rate = kaas::bench::MeasureThenStop(shared, window);
  for (std::thread& thread : threads) thread.join();
  ::close(write_fd);
  ::unlink(path.c_str());
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/var/tmp";
  const absl::Duration window =
      absl::Seconds(argc > 2 ? std::atof(argv[2]) : 3.0);
  const std::string path = absl::StrCat(dir, "/overlapping-sync.", getpid());
  const Rate single = Run(path, 1, 1, window);
  std::printf("P=1  S=1: %8.0f acks/s (the raw single-file fdatasync rate)\n",
              single.acks_per_s);
  for (int syncers : {1, 2, 4, 8}) {
    const Rate rate = Run(path, 64, syncers, window);
    std::printf(
        "P=64 S=%d: %8.0f acks/s, %6.0f fdatasyncs/s, %5.1f per fdatasync, "
        "%5.1fx the single-file rate\n",
        syncers, rate.acks_per_s, rate.syncs_per_s,
        rate.acks_per_s / rate.syncs_per_s,
        rate.acks_per_s / single.acks_per_s);
  }
  return 0;
}
