// Model-based operation fuzzing (after Redpanda's opfuzz): seeded random
// sequences of engine operations run against the DiskEngine (on the
// fault-injecting filesystem, so that a step can be a simulated power loss)
// and the MemoryEngine as the oracle. Every result is compared: error codes,
// offsets, duplicate detection, the bytes a read returns, the high
// watermark, last stable offset, log start and end, aborted transactions,
// timestamp lookups. A divergence fails with the seed and a shrunk replay:
// the shortest sequence found (by removing steps) that still diverges.
//
// Operations: appends with acks all/1, plain, idempotent (and retried) and
// transactional producers, commit and abort markers, reads with both
// isolations from random offsets, OffsetForTimestamp, DeleteRecords,
// take-over at a new epoch, relinquish and take over again, and power loss
// and reopen (after an acks=all append, so that everything acknowledged
// before is durable on both).
//
// KAAS_OPFUZZ_SEEDS (default 12) and KAAS_OPFUZZ_FIRST_SEED (default 1)
// choose the seeds; `./dev fuzz opfuzz --seeds=N` runs many.
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/storage_error.h"
#include "fs/fs_util.h"
#include "gtest/gtest.h"
#include "storage/engine/disk_engine_testlib.h"
#include "storage/engine/memory_engine.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"

namespace kaas {
namespace {

const TopicPartition kTp{"opfuzz", 0};

enum class OpKind {
  kAppendPlain,
  kAppendIdempotent,
  kRetryIdempotent,
  kAppendTransactional,
  kEndTransaction,
  kRead,
  kReadCommitted,
  kOffsetForTimestamp,
  kDeleteRecords,
  kNewEpoch,
  kRelinquishAndTakeOver,
  kCrash,
  kCount,
};

const char* OpName(OpKind kind) {
  switch (kind) {
    case OpKind::kAppendPlain:
      return "append";
    case OpKind::kAppendIdempotent:
      return "append-idempotent";
    case OpKind::kRetryIdempotent:
      return "retry-idempotent";
    case OpKind::kAppendTransactional:
      return "append-txn";
    case OpKind::kEndTransaction:
      return "end-txn";
    case OpKind::kRead:
      return "read";
    case OpKind::kReadCommitted:
      return "read-committed";
    case OpKind::kOffsetForTimestamp:
      return "offset-for-timestamp";
    case OpKind::kDeleteRecords:
      return "delete-records";
    case OpKind::kNewEpoch:
      return "new-epoch";
    case OpKind::kRelinquishAndTakeOver:
      return "relinquish-take-over";
    case OpKind::kCrash:
      return "crash";
    case OpKind::kCount:
      break;
  }
  return "?";
}

// One step; `a` and `b` are its random parameters, read per kind.
struct Op {
  OpKind kind;
  uint32_t a;
  uint32_t b;
};

std::string Describe(const std::vector<Op>& ops) {
  std::vector<std::string> parts;
  for (const Op& op : ops) {
    parts.push_back(absl::StrCat(OpName(op.kind), "(", op.a, ",", op.b, ")"));
  }
  return absl::StrJoin(parts, " ");
}

std::vector<Op> Generate(uint64_t seed, int length) {
  std::mt19937_64 random(seed);
  std::vector<Op> ops;
  for (int i = 0; i < length; ++i) {
    // Appends are the common case.
    const uint64_t pick = random() % 24;
    OpKind kind = pick < 12 ? static_cast<OpKind>(pick % 5)
                            : static_cast<OpKind>(pick - 12);
    if (kind == OpKind::kCount) kind = OpKind::kRead;
    ops.push_back({kind, static_cast<uint32_t>(random()),
                   static_cast<uint32_t>(random())});
  }
  return ops;
}

// The state both engines share: what the producers have sent.
struct Producers {
  int64_t epoch = 1;
  int32_t idempotent_seq = 0;
  std::string last_idempotent;  // for retries
  bool transaction_open = false;
  int32_t transactional_seq = 0;
  int64_t timestamp = 1000;
};

constexpr int64_t kIdempotentId = 11;
constexpr int64_t kTransactionalId = 12;

class OpFuzzTest : public DiskEngineTest {
 protected:
  std::unique_ptr<DiskEngine> NewDisk() {
    DiskEngine::Options options = MakeOptions();
    options.default_config.segment_bytes = 4 << 10;
    options.default_config.checkpoint_interval_bytes = 2 << 10;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    EXPECT_OK(engine.status());
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  static std::unique_ptr<MemoryEngine> NewMemory() {
    MemoryEngine::Options options;
    options.partition_config.segment_bytes = 4 << 10;
    return std::make_unique<MemoryEngine>(options);
  }

  // Runs `ops` on fresh engines; returns the first divergence (empty if
  // none).
  std::string Run(const std::vector<Op>& ops) {
    std::string divergence = RunOnFreshDirs(ops);
    fs().ClearFaults();
    fs::RemoveTree(fs(), data_dir()).IgnoreError();
    return divergence;
  }

  std::string RunOnFreshDirs(const std::vector<Op>& ops) {
    std::unique_ptr<DiskEngine> disk = NewDisk();
    std::unique_ptr<MemoryEngine> memory = NewMemory();
    if (disk == nullptr) return "the disk engine did not open";
    Producers producers;
    auto both_take_over = [&](int64_t epoch) -> std::string {
      absl::StatusOr<int64_t> d = disk->TakeOver(kTp, epoch);
      absl::StatusOr<int64_t> m = memory->TakeOver(kTp, epoch);
      if (d.ok() != m.ok() || (d.ok() && *d != *m)) {
        return absl::StrCat("take over at ", epoch, ": disk ",
                            d.ok() ? absl::StrCat(*d) : d.status().ToString(),
                            ", memory ",
                            m.ok() ? absl::StrCat(*m) : m.status().ToString());
      }
      return "";
    };
    if (std::string d = both_take_over(producers.epoch); !d.empty()) return d;
    for (size_t step = 0; step < ops.size(); ++step) {
      std::string divergence =
          Step(ops[step], producers, disk, *memory, both_take_over);
      if (trace_) {
        std::cout << "step " << step << " " << OpName(ops[step].kind)
                  << ": disk " << Bounds(*disk) << "; memory "
                  << Bounds(*memory) << "\n";
      }
      if (!divergence.empty()) {
        return absl::StrCat("step ", step, " ", OpName(ops[step].kind), ": ",
                            divergence);
      }
    }
    return "";
  }

  // The partition's bounds, for traces.
  static std::string Bounds(StorageEngine& engine) {
    auto show = [](const absl::StatusOr<int64_t>& v) {
      return v.ok() ? absl::StrCat(*v) : std::string("-");
    };
    return absl::StrCat("start ", show(engine.LogStartOffset(kTp)), " lso ",
                        show(engine.LastStableOffset(kTp)), " hw ",
                        show(engine.HighWatermark(kTp)));
  }

  // KAAS_OPFUZZ_TRACE=1 prints the bounds after every step of the shrunk
  // replay.
  bool trace_ = false;

  static std::string Compare(const char* what,
                             const absl::StatusOr<AppendResult>& d,
                             const absl::StatusOr<AppendResult>& m) {
    if (GetStorageErrorCode(d.status()) != GetStorageErrorCode(m.status())) {
      return absl::StrCat(what, ": disk ", d.status().ToString(), ", memory ",
                          m.status().ToString());
    }
    if (d.ok() &&
        (d->base_offset != m->base_offset || d->last_offset != m->last_offset ||
         d->duplicate != m->duplicate)) {
      return absl::StrCat(what, ": disk offsets ", d->base_offset, "..",
                          d->last_offset, d->duplicate ? " (duplicate)" : "",
                          ", memory ", m->base_offset, "..", m->last_offset,
                          m->duplicate ? " (duplicate)" : "");
    }
    return "";
  }

  // Appends `batch` to both; advances nothing (the caller does on OK).
  static std::string AppendBoth(DiskEngine& disk, MemoryEngine& memory,
                                int64_t epoch, Acks acks,
                                const std::string& batch, bool* ok) {
    absl::StatusOr<AppendResult> d =
        disk.AppendAndWait(kTp, epoch, acks, batch);
    absl::StatusOr<AppendResult> m =
        memory.AppendAndWait(kTp, epoch, acks, batch);
    *ok = d.ok() && m.ok();
    return Compare("append", d, m);
  }

  static std::string CompareRead(DiskEngine& disk, MemoryEngine& memory,
                                 int64_t offset, Isolation isolation) {
    absl::StatusOr<ReadResult> d = disk.Read(kTp, offset, 1 << 16, isolation);
    absl::StatusOr<ReadResult> m = memory.Read(kTp, offset, 1 << 16, isolation);
    if (GetStorageErrorCode(d.status()) != GetStorageErrorCode(m.status())) {
      return absl::StrCat("read at ", offset, ": disk ", d.status().ToString(),
                          ", memory ", m.status().ToString());
    }
    if (!d.ok()) return "";
    const auto fields = [](const ReadResult& r) {
      std::string aborted;
      for (const AbortedTransaction& t : r.aborted_transactions) {
        absl::StrAppend(&aborted, t.producer_id, "@", t.first_offset, " ");
      }
      return absl::StrCat("batches ", r.batches, " next ", r.next_offset,
                          " hw ", r.high_watermark, " start ",
                          r.log_start_offset, " lso ", r.last_stable_offset,
                          " leo ", r.log_end_offset, " aborted [", aborted,
                          "]");
    };
    if (fields(*d) != fields(*m)) {
      return absl::StrCat("read at ", offset, ": disk ", fields(*d),
                          "; memory ", fields(*m));
    }
    if (std::string(d->records) != std::string(m->records)) {
      return absl::StrCat("read at ", offset, ": the bytes differ");
    }
    return "";
  }

  // An acks=1 append on disk becomes visible (the high watermark is the
  // durable end) when the sync cycle it requested ends; on the memory
  // engine at once. Waits for the disk engine to catch up before a step
  // that observes the high watermark.
  static std::string Settle(DiskEngine& disk, MemoryEngine& memory) {
    absl::StatusOr<int64_t> target = memory.HighWatermark(kTp);
    if (!target.ok()) return "";
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (true) {
      absl::StatusOr<int64_t> hw = disk.HighWatermark(kTp);
      if (!hw.ok() || *hw >= *target) return "";
      if (absl::Now() > deadline) {
        return absl::StrCat("the disk high watermark stays at ", *hw,
                            ", the memory engine's is ", *target);
      }
      std::this_thread::yield();
    }
  }

  template <typename TakeOver>
  std::string Step(const Op& op, Producers& p,
                   std::unique_ptr<DiskEngine>& disk, MemoryEngine& memory,
                   TakeOver& both_take_over) {
    bool ok = false;
    const int records = 1 + static_cast<int>(op.a % 4);
    const size_t value_size = 10 + op.b % 400;
    p.timestamp += op.b % 7;
    auto build = [&](test::BatchBuilder builder) {
      builder.BaseTimestamp(p.timestamp);
      for (int i = 0; i < records; ++i) {
        builder.AddRecord(absl::StrCat("key", (op.a + i) % 13),
                          std::string(value_size, 'a' + op.a % 26));
      }
      return builder.Build();
    };
    const Acks acks = op.b % 3 == 0 ? Acks::kLeader : Acks::kAll;
    switch (op.kind) {
      case OpKind::kAppendPlain:
        return AppendBoth(*disk, memory, p.epoch, acks,
                          build(test::BatchBuilder()), &ok);
      case OpKind::kAppendIdempotent: {
        const std::string batch = build(
            test::BatchBuilder().Producer(kIdempotentId, 0, p.idempotent_seq));
        std::string d = AppendBoth(*disk, memory, p.epoch, acks, batch, &ok);
        if (ok) {
          p.idempotent_seq += records;
          p.last_idempotent = batch;
        }
        return d;
      }
      case OpKind::kRetryIdempotent:
        if (p.last_idempotent.empty()) return "";
        return AppendBoth(*disk, memory, p.epoch, acks, p.last_idempotent, &ok);
      case OpKind::kAppendTransactional: {
        const std::string batch =
            build(test::BatchBuilder()
                      .Producer(kTransactionalId, 0, p.transactional_seq)
                      .Transactional());
        std::string d = AppendBoth(*disk, memory, p.epoch, acks, batch, &ok);
        if (ok) {
          p.transactional_seq += records;
          p.transaction_open = true;
        }
        return d;
      }
      case OpKind::kEndTransaction: {
        if (!p.transaction_open) return "";
        const std::string marker = test::ControlBatch(
            op.a % 2 == 0 ? ControlType::kCommit : ControlType::kAbort,
            kTransactionalId, 0, 0, p.timestamp);
        std::string d =
            AppendBoth(*disk, memory, p.epoch, Acks::kAll, marker, &ok);
        if (ok) p.transaction_open = false;
        return d;
      }
      case OpKind::kRead:
      case OpKind::kReadCommitted: {
        if (std::string d = Settle(*disk, memory); !d.empty()) return d;
        absl::StatusOr<int64_t> end = memory.HighWatermark(kTp);
        const int64_t offset = end.ok() ? op.a % (*end + 2) : op.a % 8;
        return CompareRead(*disk, memory, offset,
                           op.kind == OpKind::kRead
                               ? Isolation::kReadUncommitted
                               : Isolation::kReadCommitted);
      }
      case OpKind::kOffsetForTimestamp: {
        if (std::string d = Settle(*disk, memory); !d.empty()) return d;
        // Now and then -1 (latest) and -2 (earliest).
        const int64_t timestamp = op.b % 5 == 0
                                      ? -1 - static_cast<int64_t>(op.b % 2)
                                      : 990 + op.a % (p.timestamp - 980);
        const Isolation isolation = op.b % 2 == 0 ? Isolation::kReadCommitted
                                                  : Isolation::kReadUncommitted;
        absl::StatusOr<OffsetAndTimestamp> d =
            disk->OffsetForTimestamp(kTp, timestamp, isolation);
        absl::StatusOr<OffsetAndTimestamp> m =
            memory.OffsetForTimestamp(kTp, timestamp, isolation);
        if (GetStorageErrorCode(d.status()) !=
                GetStorageErrorCode(m.status()) ||
            (d.ok() &&
             (d->offset != m->offset || d->timestamp != m->timestamp))) {
          return absl::StrCat(
              "at ", timestamp, ": disk ",
              d.ok() ? absl::StrCat(d->offset, "/", d->timestamp)
                     : d.status().ToString(),
              ", memory ",
              m.ok() ? absl::StrCat(m->offset, "/", m->timestamp)
                     : m.status().ToString());
        }
        return "";
      }
      case OpKind::kDeleteRecords: {
        if (std::string d = Settle(*disk, memory); !d.empty()) return d;
        absl::StatusOr<int64_t> end = memory.HighWatermark(kTp);
        const int64_t target = end.ok() ? op.a % (*end + 2) : 0;
        absl::StatusOr<int64_t> d = disk->DeleteRecords(kTp, target);
        absl::StatusOr<int64_t> m = memory.DeleteRecords(kTp, target);
        if (GetStorageErrorCode(d.status()) !=
                GetStorageErrorCode(m.status()) ||
            (d.ok() && *d != *m)) {
          return absl::StrCat(
              "to ", target, ": disk ",
              d.ok() ? absl::StrCat(*d) : d.status().ToString(), ", memory ",
              m.ok() ? absl::StrCat(*m) : m.status().ToString());
        }
        return "";
      }
      case OpKind::kNewEpoch:
        return both_take_over(++p.epoch);
      case OpKind::kRelinquishAndTakeOver: {
        absl::Status d = disk->Relinquish(kTp);
        absl::Status m = memory.Relinquish(kTp);
        if (GetStorageErrorCode(d) != GetStorageErrorCode(m)) {
          return absl::StrCat("relinquish: disk ", d.ToString(), ", memory ",
                              m.ToString());
        }
        return both_take_over(++p.epoch);
      }
      case OpKind::kCrash: {
        // An acks=all append first: everything acknowledged before it is
        // then durable on the disk engine too.
        std::string d = AppendBoth(*disk, memory, p.epoch, Acks::kAll,
                                   build(test::BatchBuilder()), &ok);
        if (!d.empty()) return d;
        fs().Crash();
        disk.reset();
        disk = NewDisk();
        if (disk == nullptr) return "the disk engine did not reopen";
        absl::Status m = memory.Relinquish(kTp);
        if (!m.ok()) return absl::StrCat("memory relinquish: ", m.ToString());
        return both_take_over(++p.epoch);
      }
      case OpKind::kCount:
        break;
    }
    return "";
  }

  // The shortest sequence found by removing chunks of steps (halving the
  // chunk size) that still diverges.
  std::vector<Op> Shrink(std::vector<Op> ops) {
    for (size_t chunk = ops.size() / 2; chunk >= 1; chunk /= 2) {
      for (size_t start = 0; start + chunk <= ops.size();) {
        std::vector<Op> fewer = ops;
        fewer.erase(fewer.begin() + start, fewer.begin() + start + chunk);
        if (!Run(fewer).empty()) {
          ops = std::move(fewer);
        } else {
          start += chunk;
        }
      }
    }
    return ops;
  }
};

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

TEST_F(OpFuzzTest, DiskEngineMatchesTheMemoryEngine) {
  const int seeds = EnvInt("KAAS_OPFUZZ_SEEDS", 12);
  const int first = EnvInt("KAAS_OPFUZZ_FIRST_SEED", 1);
  for (int seed = first; seed < first + seeds; ++seed) {
    const std::vector<Op> ops = Generate(seed, 60);
    const std::string divergence = Run(ops);
    if (divergence.empty()) continue;
    const std::vector<Op> shrunk = Shrink(ops);
    trace_ = std::getenv("KAAS_OPFUZZ_TRACE") != nullptr;
    FAIL() << "seed " << seed << ": " << divergence << "\nshrunk to "
           << shrunk.size() << " steps (" << Run(shrunk) << "):\n  "
           << Describe(shrunk);
  }
  std::cout << "opfuzz: seeds " << first << ".." << first + seeds - 1
            << " agree\n";
}

}  // namespace
}  // namespace kaas
