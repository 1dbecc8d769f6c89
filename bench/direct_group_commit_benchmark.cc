// How fast can acks=all go with direct I/O on this device? A raw program of
// the shape of the (a) rows with direct I/O, no engine: P producer threads
// copy R-byte records into an aligned in-memory log (one at a time, as under
// the partition lock) and each waits until its record is durable; one sync
// thread writes what accumulated since its last write with one O_DIRECT
// pwrite (from the block holding the first unwritten byte, the last block
// padded with zeros), fdatasyncs, and marks it durable. Variants:
//
//   * linger: before each write the sync thread waits (at most 500 us)
//     until every producer has a record waiting, as the engine's
//     group-commit linger does;
//   * written space: the file is first filled with zeros and fdatasynced,
//     so the writes overwrite initialized blocks within the file's size and
//     an fdatasync needs no journal commit (no size change, no unwritten
//     extent to convert): what recycled segment files would give;
//
// beside a buffered variant (one pwrite per record into the page cache, the
// engine's default path) and the raw O_DIRECT sequential write the bench
// compares the direct rows with (1 MiB writes into a preallocated file, one
// fdatasync at the end).
//
//   bazel run --config=opt //bench:direct_group_commit_benchmark [-- DIR
//   [SECONDS [RECORD_BYTES [PRODUCERS]]]]

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/group_commit_window.h"

namespace {

constexpr uint64_t kBlock = 4096;
constexpr uint64_t kMiB = uint64_t{1} << 20;

uint64_t AlignDown(uint64_t n) { return n - n % kBlock; }

[[noreturn]] void Die(const std::string& what) {
  std::perror(what.c_str());
  std::exit(1);
}

struct Variant {
  const char* name;
  bool direct;
  bool linger;
  bool written_space;
};

struct Rate {
  double acks_per_s = 0;
  double mb_per_s = 0;
  double syncs_per_s = 0;
};

using AlignedBytes = std::unique_ptr<char, decltype(&std::free)>;

AlignedBytes Allocate(uint64_t bytes, char fill) {
  AlignedBytes memory(static_cast<char*>(std::aligned_alloc(kBlock, bytes)),
                      &std::free);
  if (memory == nullptr) Die("aligned_alloc");
  std::memset(memory.get(), fill, bytes);  // touched before the window
  return memory;
}

// Plain pthread primitives (a raw program).
struct Shared {
  std::mutex mu;
  uint64_t end = 0;      // bytes appended
  uint64_t durable = 0;  // bytes known durable
  int waiting = 0;       // producers waiting for durability
  int64_t acks = 0;
  int64_t syncs = 0;
  bool stop = false;
  std::condition_variable appended;
  std::condition_variable synced;
};

Rate Run(const std::string& path, const Variant& variant, int producers,
         size_t record_bytes, absl::Duration window, uint64_t capacity) {
  const int fd = ::open(
      path.c_str(),
      O_RDWR | O_CREAT | O_TRUNC | (variant.direct ? O_DIRECT : 0), 0644);
  if (fd < 0) Die("open " + path);
  if (variant.written_space) {
    const AlignedBytes zeros = Allocate(kMiB, 0);
    for (uint64_t at = 0; at < capacity; at += kMiB) {
      if (::pwrite(fd, zeros.get(), kMiB, static_cast<off_t>(at)) !=
          static_cast<ssize_t>(kMiB)) {
        Die("pwrite zeros");
      }
    }
    if (::fdatasync(fd) != 0) Die("fdatasync");
  }
  const AlignedBytes log = Allocate(capacity + kBlock, 'x');
  Shared shared;
  std::thread syncer([&] {
    const AlignedBytes edge = Allocate(kBlock, 0);
    uint64_t written = 0;  // bytes below are in the file
    std::unique_lock<std::mutex> lock(shared.mu);
    while (true) {
      shared.appended.wait(
          lock, [&] { return shared.stop || shared.end > shared.durable; });
      if (shared.stop) break;
      if (variant.linger) {
        shared.appended.wait_for(lock, std::chrono::microseconds(500), [&] {
          return shared.stop || shared.waiting >= producers;
        });
      }
      const uint64_t to = shared.end;
      lock.unlock();
      if (variant.direct) {
        const uint64_t from = AlignDown(written);
        const uint64_t whole = AlignDown(to);
        if (whole > from && ::pwrite(fd, log.get() + from, whole - from,
                                     static_cast<off_t>(from)) !=
                                static_cast<ssize_t>(whole - from)) {
          Die("pwrite");
        }
        if (to > whole) {
          std::memset(edge.get(), 0, kBlock);
          std::memcpy(edge.get(), log.get() + whole, to - whole);
          if (::pwrite(fd, edge.get(), kBlock, static_cast<off_t>(whole)) !=
              static_cast<ssize_t>(kBlock)) {
            Die("pwrite");
          }
        }
        written = to;
      }
      if (::fdatasync(fd) != 0) Die("fdatasync");
      lock.lock();
      ++shared.syncs;
      shared.durable = to;
      shared.synced.notify_all();
    }
  });
  std::vector<std::thread> threads;
  for (int i = 0; i < producers; ++i) {
    threads.emplace_back([&] {
      const std::string record(record_bytes, 'r');
      std::unique_lock<std::mutex> lock(shared.mu);
      while (!shared.stop && shared.end + record_bytes <= capacity) {
        const uint64_t at = shared.end;
        if (variant.direct) {
          std::memcpy(log.get() + at, record.data(), record_bytes);
        } else if (::pwrite(fd, record.data(), record_bytes,
                            static_cast<off_t>(at)) !=
                   static_cast<ssize_t>(record_bytes)) {
          Die("pwrite");
        }
        shared.end = at + record_bytes;
        ++shared.waiting;
        shared.appended.notify_all();
        shared.synced.wait(lock, [&] {
          return shared.stop || shared.durable >= at + record_bytes;
        });
        --shared.waiting;
        ++shared.acks;
      }
    });
  }
  const kaas::bench::GroupCommitRates rates =
      kaas::bench::MeasureThenStop(shared, window);
  for (std::thread& thread : threads) thread.join();
  syncer.join();
  ::close(fd);
  ::unlink(path.c_str());
  Rate rate;
  rate.acks_per_s = rates.acks_per_s;
  rate.mb_per_s = rate.acks_per_s * static_cast<double>(record_bytes) / 1e6;
  rate.syncs_per_s = rates.syncs_per_s;
  return rate;
}

// The bench's raw O_DIRECT baseline: 1 MiB writes into a preallocated
// file, one fdatasync at the end.
double DirectSequentialWrite(const std::string& path, uint64_t bytes) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_DIRECT, 0644);
  if (fd < 0) Die("open " + path);
  if (::fallocate(fd, 0, 0, static_cast<off_t>(bytes)) != 0) {
    Die("fallocate");
  }
  const AlignedBytes block = Allocate(kMiB, 's');
  const absl::Time start = absl::Now();
  for (uint64_t at = 0; at < bytes; at += kMiB) {
    if (::pwrite(fd, block.get(), kMiB, static_cast<off_t>(at)) !=
        static_cast<ssize_t>(kMiB)) {
      Die("pwrite");
    }
  }
  if (::fdatasync(fd) != 0) Die("fdatasync");
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  ::close(fd);
  ::unlink(path.c_str());
  return static_cast<double>(bytes) / 1e6 / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/var/tmp";
  const absl::Duration window =
      absl::Seconds(argc > 2 ? std::atof(argv[2]) : 3.0);
  const size_t record_bytes = argc > 3 ? std::atoi(argv[3]) : 16384;
  const int producers = argc > 4 ? std::atoi(argv[4]) : 64;
  const std::string path = absl::StrCat(dir, "/direct-group-commit.", getpid());
  // Enough for the window at several GB/s; touched before the window.
  const uint64_t capacity = uint64_t{4} << 30;
  const double sequential = DirectSequentialWrite(path, capacity);
  std::printf("raw O_DIRECT sequential write: %.0f MB/s\n", sequential);
  for (const Variant& variant : {
           Variant{"buffered", false, false, false},
           Variant{"direct", true, false, false},
           Variant{"direct, linger", true, true, false},
           Variant{"direct, linger, written space", true, true, true},
       }) {
    const Rate rate =
        Run(path, variant, producers, record_bytes, window, capacity);
    std::printf(
        "P=%d %zu-byte records, %-30s %8.0f acks/s %7.1f MB/s (%.2fx "
        "O_DIRECT sequential), %.1f per fdatasync\n",
        producers, record_bytes, variant.name, rate.acks_per_s, rate.mb_per_s,
        rate.mb_per_s / sequential,
        rate.acks_per_s / std::max(rate.syncs_per_s, 1.0));
  }
  return 0;
}
