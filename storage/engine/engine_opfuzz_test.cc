// Model-based operation fuzzing (after Redpanda's opfuzz): seeded random
// sequences of engine operations run against the DiskEngine (on the
// fault-injecting filesystem, so that a step can be a simulated power loss
// or an I/O error) and the MemoryEngine as the oracle. Every result is
// compared: error codes, offsets, duplicate detection, the bytes a read
// returns, the high watermark, last stable offset, log start and end,
// aborted transactions, timestamp lookups, leader-epoch lookups, producer
// state. A divergence fails with the seed and a shrunk replay: the shortest
// sequence found (by removing steps) that still diverges.
//
// Operations, and the oracle rule of each where it is not "both engines
// answer the same":
//   * appends with acks 0, 1 and all; plain, idempotent (and retried) and
//     transactional producers, commit and abort markers. As a follower the
//     same batches go through AppendAsFollower with the leader's offsets and
//     epoch (now and then a wrong offset or epoch).
//   * reads with both isolations from random offsets, OffsetForTimestamp,
//     DeleteRecords, SetHighWatermark (broker-managed seeds), an inspection
//     (OffsetForLeaderEpoch of every epoch, DescribeProducers, aborted
//     ranges, the bounds, the role, epoch and log dir).
//   * take-over at a new epoch, relinquish and take over again,
//     BecomeFollower, TruncateTo, TruncateFullyAndStartAt.
//   * crash: an acks=all append, then power loss and reopen; power loss:
//     an acks=0/1 append, then power loss at once (torn tails kept, zeroed
//     or garbled). The disk log after recovery must be a prefix of the
//     model's that holds everything durable: everything acknowledged with
//     acks=all, everything below the high watermark when the power went
//     (with flush.messages 1 it is the durable end), everything a take-over,
//     relinquish, move or truncation synced. The model is then truncated to
//     the disk's end (an acks 0/1 suffix may be lost, nothing else).
//   * roll: the clock passes segment.ms; RollIfAged rolls exactly when the
//     active segment holds data. Invisible in every compared result.
//   * retention: a RetentionCleaner sweep (retention.bytes and retention.ms
//     small); the new log start must be what Kafka's rules give for the
//     segments described before it (never past the high watermark, whole
//     segments only); the model applies it as DeleteRecords.
//   * move: MovePartitionToLogDir between "default" and "fast": returns the
//     source, leads again at the same epoch and role, and is invisible.
//   * fault: one injected error (EIO/ENOSPC on a .log write or fdatasync, a
//     segment create, index, checkpoint, snapshot, manifest and directory
//     syncs) before an append, an age roll, a take-over or DeleteRecords.
//     The disk engine answers as the model does or with a retriable error
//     (kStorageError, kStalled, kNotLeader); it is then brought back (the
//     stall probe, a re-driven take-over, at worst a restart) and its log
//     must be the model's, or the model's plus exactly the batch whose
//     append failed (then applied to the model); DeleteRecords may have
//     happened or not. Nothing is allowed to be lost.
//   * compact (compacted seeds): one pass on the disk engine only. From
//     then on the compacted part of the log (below the pass's map end) is
//     compared by records, not bytes: every record the disk engine serves
//     is the model's record at that offset, and the latest committed value
//     of every key is the model's; offsets, bounds and everything past the
//     compacted part still compare exactly.
//
// KAAS_OPFUZZ_SEEDS (default 12) and KAAS_OPFUZZ_FIRST_SEED (default 1)
// choose the seeds; `./dev fuzz opfuzz --seeds=N` runs many.
// KAAS_OPFUZZ_TRACE=1 prints the bounds after every step of the replay;
// KAAS_OPFUZZ_SHRINK=0 replays (and traces) the whole failing sequence.
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "base/storage_error.h"
#include "cleaner/retention_cleaner.h"
#include "fs/fs_util.h"
#include "fs/posix_file_system.h"
#include "gtest/gtest.h"
#include "storage/batch/record_batch.h"
#include "storage/common/offset_map.h"
#include "storage/engine/disk_engine_testlib.h"
#include "storage/engine/memory_engine.h"
#include "testing/batch_builder.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/status_matchers.h"
#include "testing/stored_records.h"

namespace kaas {
namespace {

const TopicPartition kTp{"opfuzz", 0};
constexpr char kDefaultDir[] = "default";
constexpr char kExtraDir[] = "fast";
// The manual clock's start: batches carry CreateTimes near it.
constexpr int64_t kStartMs = 1700000000000;
const absl::Duration kSegmentMs = absl::Minutes(1);
const absl::Duration kRetentionMs = absl::Seconds(90);

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
  kPowerLoss,
  kRoll,
  kRetention,
  kMove,
  kBecomeFollower,
  kTruncate,
  kTruncateFully,
  kSetHighWatermark,
  kFault,
  kCompact,
  kInspect,
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
    case OpKind::kPowerLoss:
      return "power-loss";
    case OpKind::kRoll:
      return "roll";
    case OpKind::kRetention:
      return "retention";
    case OpKind::kMove:
      return "move";
    case OpKind::kBecomeFollower:
      return "become-follower";
    case OpKind::kTruncate:
      return "truncate";
    case OpKind::kTruncateFully:
      return "truncate-fully";
    case OpKind::kSetHighWatermark:
      return "set-high-watermark";
    case OpKind::kFault:
      return "fault";
    case OpKind::kCompact:
      return "compact";
    case OpKind::kInspect:
      return "inspect";
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

// The inverse of Describe (KAAS_OPFUZZ_REPLAY).
std::vector<Op> Parse(const std::string& text) {
  std::vector<Op> ops;
  for (absl::string_view part : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    const size_t open = part.find('(');
    const size_t comma = part.find(',');
    if (open == absl::string_view::npos || comma == absl::string_view::npos) {
      continue;
    }
    const absl::string_view name = part.substr(0, open);
    for (int kind = 0; kind < static_cast<int>(OpKind::kCount); ++kind) {
      if (name == OpName(static_cast<OpKind>(kind))) {
        ops.push_back(
            {static_cast<OpKind>(kind),
             static_cast<uint32_t>(std::strtoul(
                 std::string(part.substr(open + 1, comma - open - 1)).c_str(),
                 nullptr, 10)),
             static_cast<uint32_t>(std::strtoul(
                 std::string(part.substr(comma + 1)).c_str(), nullptr, 10))});
      }
    }
  }
  return ops;
}

// What a seed changes in both engines' config.
struct Variant {
  // PartitionConfig::broker_managed_high_watermark (SetHighWatermark works).
  bool broker_managed_high_watermark = false;
  // cleanup.policy=compact,delete (the compaction step runs).
  bool compacted = false;
  uint64_t retention_bytes = 6 << 10;
};

Variant VariantOf(uint64_t seed) {
  Variant variant;
  variant.broker_managed_high_watermark = seed % 4 == 3;
  variant.compacted = seed % 3 == 2;
  variant.retention_bytes = (4 + seed % 5) << 10;
  return variant;
}

struct Weight {
  OpKind kind;
  int weight;
};

// Appends are the common case.
constexpr Weight kWeights[] = {
    {OpKind::kAppendPlain, 12},
    {OpKind::kAppendIdempotent, 9},
    {OpKind::kRetryIdempotent, 3},
    {OpKind::kAppendTransactional, 8},
    {OpKind::kEndTransaction, 5},
    {OpKind::kRead, 6},
    {OpKind::kReadCommitted, 5},
    {OpKind::kOffsetForTimestamp, 4},
    {OpKind::kDeleteRecords, 3},
    {OpKind::kNewEpoch, 4},
    {OpKind::kRelinquishAndTakeOver, 2},
    {OpKind::kCrash, 2},
    {OpKind::kPowerLoss, 3},
    {OpKind::kRoll, 3},
    {OpKind::kRetention, 3},
    {OpKind::kMove, 2},
    {OpKind::kBecomeFollower, 3},
    {OpKind::kTruncate, 3},
    {OpKind::kTruncateFully, 2},
    {OpKind::kSetHighWatermark, 2},
    {OpKind::kFault, 6},
    {OpKind::kCompact, 3},
    {OpKind::kInspect, 3},
};

std::vector<Op> Generate(uint64_t seed, int length, const Variant& variant) {
  int total = 0;
  for (const Weight& w : kWeights) total += w.weight;
  std::mt19937_64 random(seed);
  std::vector<Op> ops;
  for (int i = 0; i < length; ++i) {
    int pick = static_cast<int>(random() % total);
    OpKind kind = OpKind::kRead;
    for (const Weight& w : kWeights) {
      if (pick < w.weight) {
        kind = w.kind;
        break;
      }
      pick -= w.weight;
    }
    if (kind == OpKind::kCompact && !variant.compacted) kind = OpKind::kRead;
    // Compacted seeds compact more often (a read or an inspection becomes
    // a pass).
    if (variant.compacted && random() % 4 == 0 &&
        (kind == OpKind::kRead || kind == OpKind::kInspect ||
         kind == OpKind::kReadCommitted)) {
      kind = OpKind::kCompact;
    }
    ops.push_back({kind, static_cast<uint32_t>(random()),
                   static_cast<uint32_t>(random())});
  }
  return ops;
}

// What the test knows besides the memory engine: the roles and producers
// both engines were given, and what the disk engine must keep.
struct Model {
  int64_t epoch = 1;
  Role role = Role::kLeader;
  std::string log_dir = kDefaultDir;
  // Every offset below it is durable on the disk engine: acknowledged with
  // acks=all, synced by a take-over, relinquish, move or truncation, or
  // below the high watermark (flush.messages 1) when the power went.
  int64_t durable_end = 0;
  // Compaction rewrote the disk log below this offset (0: never): there the
  // logs are compared by records, not bytes.
  int64_t compacted_below = 0;
  // False once a truncation cut into the compacted part: then only "every
  // record the disk serves is the model's" is checked there.
  bool latest_comparable = true;
  // False once such a cut removed a transaction marker whose transaction
  // compaction had partly emptied: the reopened transaction starts where
  // the disk log still has its batches, so the last stable offset, aborted
  // ranges and producer state are no longer compared (until a full
  // truncation).
  bool state_comparable = true;
  // After a power loss that cut the log at this offset (-1: none): the disk
  // engine's recovery keeps an epoch that begins exactly at the recovered
  // log end (a take-over's that has not written yet), the model's
  // truncation drops it. Until the log end moves (the next epoch to begin
  // there replaces it on disk), OffsetForLeaderEpoch is not compared.
  int64_t epochs_differ_at = -1;
  // The producers.
  int32_t idempotent_seq = 0;
  std::string last_idempotent;  // for retries
  bool transaction_open = false;
  int32_t transactional_seq = 0;
  int64_t timestamp = kStartMs;
};

constexpr int64_t kIdempotentId = 11;
constexpr int64_t kTransactionalId = 12;

// One stored batch, as a read returns it.
struct ImageBatch {
  int64_t base = 0;
  int64_t last = 0;
  int64_t producer_id = -1;
  bool transactional = false;
  std::string bytes;
};

// A whole log as a replica reads it (to the log end).
struct LogImage {
  int64_t start = 0;
  int64_t end = 0;
  std::vector<ImageBatch> batches;
};

std::string Show(const absl::Status& status) { return status.ToString(); }
template <typename T>
std::string Show(const absl::StatusOr<T>& v) {
  return v.ok() ? absl::StrCat(*v) : v.status().ToString();
}

absl::StatusOr<int64_t> TakeRole(StorageEngine& engine, Role role,
                                 int64_t epoch) {
  return role == Role::kLeader ? engine.TakeOver(kTp, epoch)
                               : engine.BecomeFollower(kTp, epoch);
}

absl::StatusOr<int64_t> LogEnd(StorageEngine& engine) {
  absl::StatusOr<ReplicaDescription> replica = engine.DescribeReplica(kTp);
  if (!replica.ok()) return replica.status();
  return replica->log_end_offset;
}

absl::StatusOr<LogImage> ReadImage(StorageEngine& engine) {
  LogImage image;
  absl::StatusOr<int64_t> start = engine.LogStartOffset(kTp);
  if (!start.ok()) return start.status();
  image.start = *start;
  image.end = *start;
  for (int64_t offset = *start;;) {
    absl::StatusOr<ReadResult> read =
        engine.Read(kTp, offset, 1 << 20, Isolation::kReplica);
    if (!read.ok()) return read.status();
    image.end = read->log_end_offset;
    if (read->batches == 0) break;
    const std::string flat(read->records);
    absl::string_view bytes = flat;
    while (!bytes.empty()) {
      absl::StatusOr<size_t> size = PeekBatchSize(bytes);
      if (!size.ok()) return size.status();
      absl::StatusOr<RecordBatchView> batch =
          RecordBatchView::ParseHeader(bytes.substr(0, *size));
      if (!batch.ok()) return batch.status();
      image.batches.push_back({batch->base_offset(), batch->last_offset(),
                               batch->producer_id(), batch->is_transactional(),
                               std::string(bytes.substr(0, *size))});
      bytes.remove_prefix(*size);
    }
    offset = read->next_offset;
    if (offset >= image.end) break;
  }
  return image;
}

// The committed data records of `batches` at or past `from` and below
// `below`: records of aborted transactions are left out.
absl::StatusOr<std::vector<test::StoredRecord>> CommittedRecords(
    const std::vector<ImageBatch>& batches, int64_t from, int64_t below,
    const std::vector<AbortedTransaction>& aborted) {
  std::vector<test::StoredRecord> out;
  for (const ImageBatch& batch : batches) {
    absl::StatusOr<std::vector<test::StoredRecord>> records =
        test::StoredRecordsOf(batch.bytes);
    if (!records.ok()) return records.status();
    for (const test::StoredRecord& record : *records) {
      if (record.offset < from || record.offset >= below) continue;
      bool is_aborted = false;
      for (const AbortedTransaction& t : aborted) {
        is_aborted |=
            batch.transactional && batch.producer_id == t.producer_id &&
            record.offset >= t.first_offset && record.offset <= t.last_offset;
      }
      if (!is_aborted) out.push_back(record);
    }
  }
  return out;
}

std::string ShowRecord(const test::StoredRecord& r) {
  return absl::StrCat(r.offset, ":", r.key.value_or("(null)"), "=",
                      r.value.has_value() ? r.value->substr(0, 8) : "(null)",
                      "@", r.timestamp, r.control ? " control" : "");
}

bool SameRecord(const test::StoredRecord& a, const test::StoredRecord& b) {
  return a.offset == b.offset && a.key == b.key && a.value == b.value &&
         a.timestamp == b.timestamp && a.control == b.control;
}

// Every record of `disk` is the record of `model` at its offset (compaction
// only removes records, never changes one). Both ascend by offset.
std::string RecordsAreASubset(const std::vector<test::StoredRecord>& disk,
                              const std::vector<test::StoredRecord>& model) {
  size_t j = 0;
  for (const test::StoredRecord& record : disk) {
    while (j < model.size() && model[j].offset < record.offset) ++j;
    if (j == model.size() || !SameRecord(record, model[j])) {
      return absl::StrCat(
          "the disk engine serves record ", ShowRecord(record),
          ", the model has ",
          j < model.size() ? ShowRecord(model[j]) : std::string("none"));
    }
  }
  return "";
}

// How the disk engine's log relates to the model's.
enum class Relation {
  kSame,
  kDiskIsAPrefix,   // the model has more batches at its end
  kDiskHasOneMore,  // the disk log has one batch more at its end
  kDifferent,
};

struct Comparison {
  Relation relation = Relation::kDifferent;
  std::string why;  // for kDifferent
};

// Compares two images: byte for byte from the first batch at or past
// `compacted_below` on (everything, when it is 0); below it every disk
// record is the model's, and (for the offsets the disk log covers) the
// latest committed value of every key is the same.
Comparison Compare(const LogImage& d, const LogImage& m,
                   int64_t compacted_below, bool latest_comparable,
                   const std::vector<AbortedTransaction>& aborted) {
  Comparison out;
  if (d.start != m.start) {
    out.why = absl::StrCat("log start: disk ", d.start, ", model ", m.start);
    return out;
  }
  auto first_at = [&](const LogImage& image) {
    size_t i = 0;
    while (compacted_below > 0 && i < image.batches.size() &&
           image.batches[i].base < compacted_below) {
      ++i;
    }
    return i;
  };
  size_t di = first_at(d);
  size_t mi = first_at(m);
  if (compacted_below > 0) {
    const int64_t split =
        std::min(di < d.batches.size() ? d.batches[di].base : d.end,
                 mi < m.batches.size() ? m.batches[mi].base : m.end);
    const std::vector<ImageBatch> dc(d.batches.begin(), d.batches.begin() + di);
    const std::vector<ImageBatch> mc(m.batches.begin(), m.batches.begin() + mi);
    absl::StatusOr<std::vector<test::StoredRecord>> dr =
        CommittedRecords(dc, d.start, split, {});
    absl::StatusOr<std::vector<test::StoredRecord>> mr =
        CommittedRecords(mc, m.start, split, {});
    if (!dr.ok() || !mr.ok()) {
      out.why = absl::StrCat("records do not decode: disk ", Show(dr.status()),
                             ", model ", Show(mr.status()));
      return out;
    }
    if (std::string why = RecordsAreASubset(*dr, *mr); !why.empty()) {
      out.why = why;
      return out;
    }
    if (!latest_comparable) compacted_below = 0;  // ends the block below
  }
  if (compacted_below > 0) {
    // The latest committed value of each key, over what both hold.
    const int64_t end = std::min(d.end, m.end);
    absl::StatusOr<std::vector<test::StoredRecord>> dl =
        CommittedRecords(d.batches, d.start, end, aborted);
    absl::StatusOr<std::vector<test::StoredRecord>> ml =
        CommittedRecords(m.batches, m.start, end, aborted);
    if (!dl.ok() || !ml.ok()) {
      out.why = "records do not decode";
      return out;
    }
    const std::map<std::string, test::RecordValue> dk = test::LatestByKey(*dl);
    const std::map<std::string, test::RecordValue> mk = test::LatestByKey(*ml);
    if (dk != mk) {
      std::string keys;
      for (const auto& [key, value] : mk) {
        auto it = dk.find(key);
        if (it == dk.end() || it->second != value)
          absl::StrAppend(&keys, key, " ");
      }
      for (const auto& [key, value] : dk) {
        if (mk.find(key) == mk.end()) absl::StrAppend(&keys, key, " ");
      }
      out.why = absl::StrCat(
          "the latest value per key differs after "
          "compaction, keys: ",
          keys);
      return out;
    }
  }
  for (;; ++di, ++mi) {
    const bool d_done = di == d.batches.size();
    const bool m_done = mi == m.batches.size();
    if (d_done && m_done) {
      if (d.end != m.end) {
        out.why = absl::StrCat("log end: disk ", d.end, ", model ", m.end);
        return out;
      }
      out.relation = Relation::kSame;
      return out;
    }
    if (d_done) {
      out.relation = Relation::kDiskIsAPrefix;
      return out;
    }
    if (m_done) {
      out.relation = di + 1 == d.batches.size() ? Relation::kDiskHasOneMore
                                                : Relation::kDifferent;
      out.why = absl::StrCat("the disk log has ", d.batches.size() - di,
                             " batches more, from offset ", d.batches[di].base);
      return out;
    }
    if (d.batches[di].bytes != m.batches[mi].bytes) {
      out.why = absl::StrCat("the batch at offset ", m.batches[mi].base,
                             " differs (disk: at ", d.batches[di].base, "..",
                             d.batches[di].last, ", model ", m.batches[mi].base,
                             "..", m.batches[mi].last, ")");
      return out;
    }
  }
}

// A batch the disk engine may or may not have stored (its append failed
// with a retriable error).
struct Candidate {
  std::string batch;  // as sent
  bool follower = false;
  Acks acks = Acks::kAll;
};

// The faults the fault step injects, and what it does next.
enum class Inner { kAppend, kAppendAll, kAgeRollAppend, kTakeOver, kDelete };

struct FaultSite {
  const char* name;
  test::FsOp op;
  const char* path;
  int error;
  Inner inner;
};

const FaultSite kFaultSites[] = {
    {"log-write-eio", test::FsOp::kWrite, ".log", EIO, Inner::kAppend},
    {"log-write-enospc", test::FsOp::kWrite, ".log", ENOSPC, Inner::kAppend},
    {"log-sync-eio", test::FsOp::kDataSync, ".log", EIO, Inner::kAppendAll},
    {"log-sync-enospc", test::FsOp::kDataSync, ".log", ENOSPC,
     Inner::kAppendAll},
    {"segment-create-eio", test::FsOp::kOpenForWrite, ".log", EIO,
     Inner::kAgeRollAppend},
    {"index-write-eio", test::FsOp::kWrite, "index", EIO,
     Inner::kAgeRollAppend},
    {"index-sync-enospc", test::FsOp::kDataSync, "index", ENOSPC,
     Inner::kAgeRollAppend},
    {"checkpoint-sync-eio", test::FsOp::kDataSync, "recovery-checkpoint", EIO,
     Inner::kAppendAll},
    {"snapshot-write-enospc", test::FsOp::kWrite, ".snapshot", ENOSPC,
     Inner::kAppendAll},
    {"manifest-sync-eio", test::FsOp::kDataSync, "manifest", EIO,
     Inner::kTakeOver},
    {"manifest-rename-eio", test::FsOp::kRename, "manifest", EIO,
     Inner::kDelete},
    {"dir-sync-eio", test::FsOp::kSyncDir, "/", EIO, Inner::kTakeOver},
};

bool RetriableDiskError(const absl::Status& status) {
  const StorageErrorCode code = GetStorageErrorCode(status);
  return code == StorageErrorCode::kStorageError ||
         code == StorageErrorCode::kStalled ||
         code == StorageErrorCode::kNotLeader;
}

class OpFuzzTest : public DiskEngineTest {
 protected:
  std::unique_ptr<DiskEngine> NewDisk() {
    DiskEngine::Options options = MakeOptions({kExtraDir});
    options.fs = ffs_.get();
    PartitionConfig& config = options.default_config;
    config.segment_bytes = 4 << 10;
    config.checkpoint_interval_bytes = 2 << 10;
    config.segment_ms = kSegmentMs;
    config.retention_ms = kRetentionMs;
    config.retention_bytes = variant_.retention_bytes;
    config.cleanup_compact = variant_.compacted;
    config.broker_managed_high_watermark =
        variant_.broker_managed_high_watermark;
    absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
        DiskEngine::Create(std::move(options));
    EXPECT_OK(engine.status());
    return engine.ok() ? *std::move(engine) : nullptr;
  }

  std::unique_ptr<MemoryEngine> NewMemory() {
    MemoryEngine::Options options;
    options.partition_config.segment_bytes = 4 << 10;
    options.partition_config.cleanup_compact = variant_.compacted;
    options.partition_config.broker_managed_high_watermark =
        variant_.broker_managed_high_watermark;
    options.clock = &clock();
    return std::make_unique<MemoryEngine>(options);
  }

  // Runs `ops` on fresh engines; returns the first divergence (empty if
  // none).
  std::string Run(const std::vector<Op>& ops) {
    std::string divergence = RunOnFreshDirs(ops);
    ffs().ClearFaults();
    fs::RemoveTree(ffs(), data_dir()).IgnoreError();
    fs::RemoveTree(ffs(), ExtraDir(kExtraDir)).IgnoreError();
    return divergence;
  }

  // The fault-injecting filesystem of the current run: a new one each run,
  // seeded by the seed, so that torn tails are the same in a replay.
  test::FaultInjectingFileSystem& ffs() { return *ffs_; }

  std::string RunOnFreshDirs(const std::vector<Op>& ops) {
    ffs_ = std::make_unique<test::FaultInjectingFileSystem>(
        fs::PosixFileSystem::Default(), seed_);
    clock().Set(absl::FromUnixMillis(kStartMs));
    std::unique_ptr<DiskEngine> disk = NewDisk();
    std::unique_ptr<MemoryEngine> memory = NewMemory();
    if (disk == nullptr) return "the disk engine did not open";
    Model model;
    if (std::string d =
            BothTakeRole(*disk, *memory, model, Role::kLeader, model.epoch);
        !d.empty()) {
      return d;
    }
    for (size_t step = 0; step < ops.size(); ++step) {
      if (counting_) ++steps_[OpName(ops[step].kind)];
      std::string divergence = Step(ops[step], model, disk, *memory);
      if (trace_) {
        std::cout << "step " << step << " " << OpName(ops[step].kind) << "("
                  << ops[step].a << "," << ops[step].b << "): disk "
                  << Bounds(*disk) << "; memory " << Bounds(*memory)
                  << "; epoch " << model.epoch
                  << (model.role == Role::kLeader ? " leader" : " follower")
                  << ", durable end " << model.durable_end << ", dir "
                  << model.log_dir << ", compacted below "
                  << model.compacted_below << "\n";
        absl::StatusOr<std::vector<std::string>> files =
            ffs().ListDir(fs::JoinPath(
                model.log_dir == kDefaultDir ? data_dir() : ExtraDir(kExtraDir),
                kTp.topic, "0"));
        if (files.ok()) {
          std::sort(files->begin(), files->end());
          std::cout << "  files: " << absl::StrJoin(*files, " ") << "\n";
        }
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
                        show(engine.HighWatermark(kTp)), " leo ",
                        show(LogEnd(engine)));
  }

  void Note(const std::string& outcome) {
    if (counting_) ++outcomes_[outcome];
  }

  // Takes the partition over in `role` at `epoch` on both engines.
  std::string BothTakeRole(DiskEngine& disk, MemoryEngine& memory, Model& m,
                           Role role, int64_t epoch) {
    absl::StatusOr<int64_t> d = TakeRole(disk, role, epoch);
    absl::StatusOr<int64_t> mem = TakeRole(memory, role, epoch);
    if (d.ok() != mem.ok() || (d.ok() && *d != *mem)) {
      return absl::StrCat("take over at ", epoch, ": disk ", Show(d),
                          ", memory ", Show(mem));
    }
    if (d.ok()) {
      // A take-over at a new epoch or in a new role makes the log durable.
      if (epoch > m.epoch || role != m.role) {
        m.durable_end = std::max(m.durable_end, *d);
      }
      m.epoch = std::max(m.epoch, epoch);
      m.role = role;
    }
    return "";
  }

  static std::string CompareAppend(const char* what,
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

  // What an append step sends.
  enum class AppendKind {
    kPlain,
    kIdempotent,
    kRetry,
    kTransactional,
    kMarker
  };
  struct Pending {
    AppendKind kind = AppendKind::kPlain;
    std::string batch;  // empty: nothing to send
    Acks acks = Acks::kAll;
    int records = 0;
  };

  static Acks AcksOf(uint32_t b) {
    switch (b % 4) {
      case 0:
        return Acks::kNone;
      case 1:
        return Acks::kLeader;
      default:
        return Acks::kAll;
    }
  }

  Pending MakeAppend(const Op& op, AppendKind kind, Model& m) {
    Pending out;
    out.kind = kind;
    out.acks = AcksOf(op.b);
    out.records = 1 + static_cast<int>(op.a % 4);
    const size_t value_size = 10 + op.b % 400;
    m.timestamp = std::max(m.timestamp, clock().NowMillis()) + op.b % 7;
    auto build = [&](test::BatchBuilder builder) {
      builder.BaseTimestamp(m.timestamp);
      for (int i = 0; i < out.records; ++i) {
        builder.AddRecord(absl::StrCat("key", (op.a + i) % 13),
                          std::string(value_size, 'a' + (op.a + i) % 26));
      }
      return builder.Build();
    };
    switch (kind) {
      case AppendKind::kPlain:
        out.batch = build(test::BatchBuilder());
        break;
      case AppendKind::kIdempotent:
        out.batch = build(
            test::BatchBuilder().Producer(kIdempotentId, 0, m.idempotent_seq));
        break;
      case AppendKind::kRetry:
        out.batch = m.last_idempotent;
        break;
      case AppendKind::kTransactional:
        out.batch =
            build(test::BatchBuilder()
                      .Producer(kTransactionalId, 0, m.transactional_seq)
                      .Transactional());
        break;
      case AppendKind::kMarker:
        if (m.transaction_open) {
          out.batch = test::ControlBatch(
              op.a % 2 == 0 ? ControlType::kCommit : ControlType::kAbort,
              kTransactionalId, 0, 0, m.timestamp);
          out.acks = Acks::kAll;
        }
        break;
    }
    return out;
  }

  // What an accepted append means for the producers and for durability.
  static void Accepted(const Pending& a, const AppendResult& r, Model& m) {
    switch (a.kind) {
      case AppendKind::kIdempotent:
        m.idempotent_seq += a.records;
        m.last_idempotent = a.batch;
        break;
      case AppendKind::kTransactional:
        m.transactional_seq += a.records;
        m.transaction_open = true;
        break;
      case AppendKind::kMarker:
        m.transaction_open = false;
        break;
      default:
        break;
    }
    if (a.acks == Acks::kAll) {
      m.durable_end = std::max(m.durable_end, r.last_offset + 1);
    }
  }

  // A follower's copy of `batch`: stamped with the leader's offset (the
  // log end; now and then one off) and epoch (now and then one off).
  static std::string AsLeaderSent(const std::string& batch, const Op& op,
                                  const Model& m, int64_t log_end) {
    std::string stamped = batch;
    int64_t base = log_end;
    if (op.a % 12 == 0) base = log_end + 1;
    if (op.a % 12 == 1 && log_end > 0) base = log_end - 1;
    int64_t epoch = m.epoch;
    if (op.b % 10 == 0) epoch = m.epoch + 1;
    if (op.b % 10 == 1) epoch = m.epoch - 1;
    SetBaseOffset(stamped.data(), base);
    SetPartitionLeaderEpoch(stamped.data(), static_cast<int32_t>(epoch));
    return stamped;
  }

  static absl::StatusOr<AppendResult> FollowerAppendAndWait(
      StorageEngine& engine, int64_t epoch, Acks acks,
      const std::string& batches) {
    absl::StatusOr<AppendResult> result =
        engine.AppendAsFollower(kTp, epoch, acks, batches);
    if (!result.ok() || acks != Acks::kAll) return result;
    if (absl::Status durable = result->durable.Wait(); !durable.ok()) {
      return durable;
    }
    return result;
  }

  // An append step on both engines: Append as leader, AppendAsFollower (of
  // the batch as its leader would send it) as follower.
  std::string AppendStep(const Op& op, AppendKind kind, Model& m,
                         DiskEngine& disk, MemoryEngine& memory) {
    Pending a = MakeAppend(op, kind, m);
    if (a.batch.empty()) return "";
    if (m.role == Role::kLeader) {
      absl::StatusOr<AppendResult> d =
          disk.AppendAndWait(kTp, m.epoch, a.acks, a.batch);
      absl::StatusOr<AppendResult> mem =
          memory.AppendAndWait(kTp, m.epoch, a.acks, a.batch);
      if (std::string why = CompareAppend("append", d, mem); !why.empty()) {
        return why;
      }
      if (d.ok() && mem.ok()) Accepted(a, *mem, m);
      return "";
    }
    absl::StatusOr<int64_t> end = LogEnd(memory);
    if (!end.ok()) return absl::StrCat("memory log end: ", Show(end));
    std::string batches = AsLeaderSent(a.batch, op, m, *end);
    if (op.b % 5 == 0) {
      // Two batches in one call, as a fetch response carries them.
      Op second = op;
      second.a = op.a / 3;
      Pending more = MakeAppend(second, AppendKind::kPlain, m);
      std::string stamped = more.batch;
      absl::StatusOr<RecordBatchView> first =
          RecordBatchView::ParseHeader(batches);
      SetBaseOffset(stamped.data(), first.ok() ? first->last_offset() + 1 : 0);
      SetPartitionLeaderEpoch(stamped.data(),
                              first.ok() ? first->partition_leader_epoch() : 0);
      batches += stamped;
      Note("follower: two batches");
    }
    absl::StatusOr<AppendResult> d =
        FollowerAppendAndWait(disk, m.epoch, a.acks, batches);
    absl::StatusOr<AppendResult> mem =
        FollowerAppendAndWait(memory, m.epoch, a.acks, batches);
    if (std::string why = CompareAppend("append as follower", d, mem);
        !why.empty()) {
      return why;
    }
    Note(d.ok() ? "follower: appended"
                : absl::StrCat(
                      "follower: refused ",
                      StorageErrorCodeName(GetStorageErrorCode(d.status()))));
    if (d.ok() && mem.ok()) Accepted(a, *mem, m);
    return "";
  }

  std::string CompareRead(DiskEngine& disk, MemoryEngine& memory,
                          int64_t offset, Isolation isolation, const Model& m) {
    absl::StatusOr<ReadResult> d = disk.Read(kTp, offset, 1 << 16, isolation);
    absl::StatusOr<ReadResult> mem =
        memory.Read(kTp, offset, 1 << 16, isolation);
    if (GetStorageErrorCode(d.status()) != GetStorageErrorCode(mem.status())) {
      return absl::StrCat("read at ", offset, ": disk ", d.status().ToString(),
                          ", memory ", mem.status().ToString());
    }
    if (!d.ok()) return "";
    const auto bounds = [](const ReadResult& r) {
      return absl::StrCat("hw ", r.high_watermark, " start ",
                          r.log_start_offset, " lso ", r.last_stable_offset,
                          " leo ", r.log_end_offset);
    };
    const auto fields = [&](const ReadResult& r) {
      std::string aborted;
      for (const AbortedTransaction& t : r.aborted_transactions) {
        absl::StrAppend(&aborted, t.producer_id, "@", t.first_offset, " ");
      }
      return absl::StrCat("batches ", r.batches, " next ", r.next_offset, " ",
                          bounds(r), " aborted [", aborted, "]");
    };
    if (m.compacted_below == 0 || offset >= m.compacted_below) {
      if (fields(*d) != fields(*mem)) {
        return absl::StrCat("read at ", offset, ": disk ", fields(*d),
                            "; memory ", fields(*mem));
      }
      if (std::string(d->records) != std::string(mem->records)) {
        return absl::StrCat("read at ", offset, ": the bytes differ");
      }
      return "";
    }
    // Inside the compacted part: the same bounds, and records the model
    // has at the same offsets.
    if (bounds(*d) != bounds(*mem)) {
      return absl::StrCat("read at ", offset, ": disk ", bounds(*d),
                          "; memory ", bounds(*mem));
    }
    absl::StatusOr<std::vector<test::StoredRecord>> dr =
        test::StoredRecordsOf(std::string(d->records));
    absl::StatusOr<std::vector<test::StoredRecord>> mr =
        test::StoredRecordsOf(std::string(mem->records));
    if (!dr.ok() || !mr.ok()) {
      return absl::StrCat("read at ", offset, ": records do not decode: disk ",
                          Show(dr.status()), ", memory ", Show(mr.status()));
    }
    if (std::string why = RecordsAreASubset(*dr, *mr); !why.empty()) {
      return absl::StrCat("read at ", offset, ": ", why);
    }
    if (d->next_offset == mem->next_offset && fields(*d) != fields(*mem) &&
        d->batches > 0 && mem->batches > 0) {
      // Same range read: the aborted transactions must agree.
      if (d->aborted_transactions.size() != mem->aborted_transactions.size()) {
        return absl::StrCat("read at ", offset, ": disk ", fields(*d),
                            "; memory ", fields(*mem));
      }
    }
    Note("read: compacted range");
    return "";
  }

  // An acks=1 append on disk becomes visible (the high watermark is the
  // durable end) when the sync cycle it requested ends; on the memory
  // engine at once. Waits for the disk engine to catch up before a step
  // that observes the high watermark.
  static std::string Settle(DiskEngine& disk, MemoryEngine& memory,
                            const Model& m) {
    // The last stable offset too: a sync cycle publishes the high watermark
    // and then the last stable offset, so a reader between the two stores
    // sees the new one with the old other.
    absl::StatusOr<int64_t> target = memory.HighWatermark(kTp);
    absl::StatusOr<int64_t> stable = memory.LastStableOffset(kTp);
    if (!target.ok() || !stable.ok()) return "";
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (true) {
      absl::StatusOr<int64_t> hw = disk.HighWatermark(kTp);
      absl::StatusOr<int64_t> lso = disk.LastStableOffset(kTp);
      if (!hw.ok() || !lso.ok() ||
          (*hw >= *target && (*lso >= *stable || !m.state_comparable))) {
        return "";
      }
      if (absl::Now() > deadline) {
        return absl::StrCat(
            "the disk high watermark / last stable offset stay "
            "at ",
            *hw, "/", *lso, ", the memory engine's are ", *target, "/",
            *stable);
      }
      std::this_thread::yield();
    }
  }

  // Everything both engines report about the partition but its bytes.
  std::string CompareState(DiskEngine& disk, MemoryEngine& memory, Model& m) {
    if (std::string d = Settle(disk, memory, m); !d.empty()) return d;
    const auto same = [](const char* what, const auto& d, const auto& mem) {
      if (d.ok() != mem.ok() || (d.ok() && *d != *mem) ||
          GetStorageErrorCode(d.status()) !=
              GetStorageErrorCode(mem.status())) {
        return absl::StrCat(what, ": disk ", Show(d), ", memory ", Show(mem));
      }
      return std::string();
    };
    std::string why;
    if (why = same("log start", disk.LogStartOffset(kTp),
                   memory.LogStartOffset(kTp));
        !why.empty()) {
      return why;
    }
    if (why = same("high watermark", disk.HighWatermark(kTp),
                   memory.HighWatermark(kTp));
        !why.empty()) {
      return why;
    }
    if (!m.state_comparable) Note("inspect: state not compared after a cut");
    if (why = same("last stable offset", disk.LastStableOffset(kTp),
                   memory.LastStableOffset(kTp));
        m.state_comparable && !why.empty()) {
      return why;
    }
    absl::StatusOr<int64_t> end = LogEnd(memory);
    if (why = same("log end", LogEnd(disk), end); !why.empty()) return why;
    if (disk.PartitionEpoch(kTp) != memory.PartitionEpoch(kTp) ||
        disk.PartitionRole(kTp) != memory.PartitionRole(kTp)) {
      return absl::StrCat(
          "epoch/role: disk ", disk.PartitionEpoch(kTp).value_or(-1), "/",
          disk.PartitionRole(kTp) == Role::kLeader ? "leader" : "other",
          ", memory ", memory.PartitionEpoch(kTp).value_or(-1), "/",
          memory.PartitionRole(kTp) == Role::kLeader ? "leader" : "other");
    }
    if (absl::StatusOr<std::string> dir = disk.PartitionLogDir(kTp);
        !dir.ok() || *dir != m.log_dir) {
      return absl::StrCat("log dir: disk ", Show(dir), ", expected ",
                          m.log_dir);
    }
    if (m.epochs_differ_at >= 0 && end.ok() && *end == m.epochs_differ_at) {
      Note("inspect: epochs not compared after a cut");
    } else {
      m.epochs_differ_at = -1;
    }
    for (int64_t epoch = 0; m.epochs_differ_at < 0 && epoch <= m.epoch + 1;
         ++epoch) {
      absl::StatusOr<EpochEndOffset> d = disk.OffsetForLeaderEpoch(kTp, epoch);
      absl::StatusOr<EpochEndOffset> mem =
          memory.OffsetForLeaderEpoch(kTp, epoch);
      if (d.ok() != mem.ok() ||
          (d.ok() && (d->leader_epoch != mem->leader_epoch ||
                      d->end_offset != mem->end_offset))) {
        return absl::StrCat(
            "offset for leader epoch ", epoch, ": disk ",
            d.ok() ? absl::StrCat(d->leader_epoch, "/", d->end_offset)
                   : d.status().ToString(),
            ", memory ",
            mem.ok() ? absl::StrCat(mem->leader_epoch, "/", mem->end_offset)
                     : mem.status().ToString());
      }
    }
    absl::StatusOr<std::vector<ProducerDescription>> dp =
        disk.DescribeProducers(kTp);
    absl::StatusOr<std::vector<ProducerDescription>> mp =
        memory.DescribeProducers(kTp);
    const auto producers = [](const auto& v) {
      if (!v.ok()) return v.status().ToString();
      std::vector<ProducerDescription> sorted = *v;
      std::sort(sorted.begin(), sorted.end(),
                [](const ProducerDescription& a, const ProducerDescription& b) {
                  return a.producer_id < b.producer_id;
                });
      std::string out;
      for (const ProducerDescription& p : sorted) {
        absl::StrAppend(&out, p.producer_id, "/", p.producer_epoch, " seq ",
                        p.last_sequence, " ts ", p.last_timestamp, " txn ",
                        p.current_txn_start_offset, "; ");
      }
      return out;
    };
    if (m.state_comparable && producers(dp) != producers(mp)) {
      return absl::StrCat("producers: disk ", producers(dp), " memory ",
                          producers(mp));
    }
    absl::StatusOr<int64_t> start = memory.LogStartOffset(kTp);
    if (start.ok() && end.ok() && m.state_comparable) {
      absl::StatusOr<std::vector<AbortedTransaction>> da =
          disk.AbortedTransactionsInRange(kTp, *start, *end + 1);
      absl::StatusOr<std::vector<AbortedTransaction>> ma =
          memory.AbortedTransactionsInRange(kTp, *start, *end + 1);
      if (da.ok() != ma.ok() || (da.ok() && *da != *ma)) {
        const auto show = [](const auto& v) {
          if (!v.ok()) return v.status().ToString();
          std::string out;
          for (const AbortedTransaction& t : *v) {
            absl::StrAppend(&out, t.producer_id, "@", t.first_offset, "..",
                            t.last_offset, " ");
          }
          return out;
        };
        return absl::StrCat("aborted transactions: disk ", show(da),
                            "; memory ", show(ma));
      }
    }
    return "";
  }

  // The producers as the model's log left them (after a truncation or a
  // loss): where their sequences continue, whether a transaction is open.
  static void ResyncProducers(MemoryEngine& memory, Model& m) {
    absl::StatusOr<std::vector<ProducerDescription>> producers =
        memory.DescribeProducers(kTp);
    if (!producers.ok()) return;
    m.transaction_open = false;
    for (const ProducerDescription& p : *producers) {
      if (p.producer_id == kIdempotentId && p.last_sequence >= 0) {
        m.idempotent_seq = p.last_sequence + 1;
      }
      if (p.producer_id == kTransactionalId) {
        if (p.last_sequence >= 0) m.transactional_seq = p.last_sequence + 1;
        m.transaction_open = p.current_txn_start_offset >= 0;
      }
    }
  }

  // Cuts the model's log at `end` (the disk engine lost what lies past
  // it), leaving the memory engine in `m.role` at `epoch`. REQUIRES: the
  // memory engine was relinquished or leads.
  std::string TruncateModel(MemoryEngine& memory, Model& m, int64_t end,
                            int64_t epoch) {
    absl::StatusOr<int64_t> f = memory.BecomeFollower(kTp, epoch);
    if (!f.ok()) return absl::StrCat("memory become follower: ", Show(f));
    absl::StatusOr<int64_t> cut = memory.TruncateTo(kTp, end);
    if (!cut.ok() || *cut != end) {
      return absl::StrCat("memory truncate to ", end, ": ", Show(cut));
    }
    if (m.role == Role::kLeader) {
      absl::StatusOr<int64_t> t = memory.TakeOver(kTp, epoch);
      if (!t.ok()) return absl::StrCat("memory take over: ", Show(t));
    }
    ResyncProducers(memory, m);
    return "";
  }

  absl::StatusOr<std::vector<AbortedTransaction>> Aborted(MemoryEngine& memory,
                                                          const LogImage& m) {
    return memory.AbortedTransactionsInRange(kTp, m.start, m.end + 1);
  }

  // After a power loss and reopen at `epoch` (disk taken over already):
  // the disk log must be a prefix of the model's (`before`, read before
  // the crash) holding everything durable. Cuts the model to it and takes
  // the memory engine over too.
  std::string CheckRecovered(DiskEngine& disk, MemoryEngine& memory, Model& m,
                             const LogImage& before,
                             const std::vector<AbortedTransaction>& aborted,
                             int64_t epoch, int64_t disk_end) {
    absl::StatusOr<LogImage> after = ReadImage(disk);
    if (!after.ok()) return absl::StrCat("disk read: ", Show(after.status()));
    Comparison c = Compare(*after, before, m.compacted_below,
                           m.latest_comparable, aborted);
    if (c.relation == Relation::kDifferent ||
        c.relation == Relation::kDiskHasOneMore) {
      return absl::StrCat("after recovery: ", c.why);
    }
    if (after->end < m.durable_end) {
      return absl::StrCat(
          "ACKNOWLEDGED DATA LOST: the recovered log ends at ", after->end,
          " but everything below ", m.durable_end,
          " was durable (acknowledged with acks=all or synced); the model's "
          "log ended at ",
          before.end);
    }
    absl::Status relinquished = memory.Relinquish(kTp);
    if (!relinquished.ok()) {
      return absl::StrCat("memory relinquish: ", Show(relinquished));
    }
    if (c.relation == Relation::kDiskIsAPrefix) {
      Note("power loss: unsynced suffix lost");
      m.epochs_differ_at = after->end;
      if (std::string why = TruncateModel(memory, m, after->end, epoch);
          !why.empty()) {
        return why;
      }
    } else {
      Note("power loss: nothing lost");
      absl::StatusOr<int64_t> t = TakeRole(memory, m.role, epoch);
      if (!t.ok()) return absl::StrCat("memory take over: ", Show(t));
    }
    absl::StatusOr<int64_t> end = LogEnd(memory);
    if (!end.ok() || *end != disk_end) {
      return absl::StrCat("take over after the crash: disk ", disk_end,
                          ", memory ", Show(end));
    }
    m.epoch = epoch;
    m.durable_end = disk_end;
    return "";
  }

  // A crash: optionally an acks=all append first (everything acknowledged
  // before is then durable), else an acks 0/1 one; then power loss.
  std::string CrashStep(const Op& op, Model& m,
                        std::unique_ptr<DiskEngine>& disk, MemoryEngine& memory,
                        bool sync_first) {
    Op append = op;
    append.b = sync_first ? 2 : op.b % 2;  // acks all; acks 0 or 1
    if (std::string d =
            AppendStep(append, AppendKind::kPlain, m, *disk, memory);
        !d.empty()) {
      return d;
    }
    absl::StatusOr<LogImage> before = ReadImage(memory);
    if (!before.ok())
      return absl::StrCat("memory read: ", Show(before.status()));
    absl::StatusOr<std::vector<AbortedTransaction>> aborted =
        Aborted(memory, *before);
    if (!aborted.ok()) return "memory aborted transactions";
    if (!variant_.broker_managed_high_watermark) {
      // flush.messages 1: the high watermark is the durable end.
      absl::StatusOr<int64_t> hw = disk->HighWatermark(kTp);
      if (hw.ok()) m.durable_end = std::max(m.durable_end, *hw);
    }
    test::CrashOptions crash;
    if (!sync_first) {
      crash.tail = static_cast<test::UnsyncedTail>(op.a % 3);
      crash.content = static_cast<test::TailContent>(op.b / 7 % 3);
    }
    ffs().Crash(crash);
    disk.reset();
    disk = NewDisk();
    if (disk == nullptr) return "the disk engine did not reopen";
    const int64_t epoch = m.epoch + 1;
    absl::StatusOr<int64_t> d = TakeRole(*disk, m.role, epoch);
    if (!d.ok()) return absl::StrCat("take over after the crash: ", Show(d));
    if (std::string why =
            CheckRecovered(*disk, memory, m, *before, *aborted, epoch, *d);
        !why.empty()) {
      return why;
    }
    return CompareState(*disk, memory, m);
  }

  // Brings the disk partition back after an injected fault: the stall
  // probe re-arms it, a take-over the fault interrupted is re-driven (at
  // worst the engine restarts, without a power loss).
  std::string RecoverDisk(std::unique_ptr<DiskEngine>& disk, Model& m) {
    ffs().ClearFaults();
    bool stalled = false;
    const absl::Time deadline = absl::Now() + absl::Seconds(3);
    while (true) {
      absl::StatusOr<PartitionStats> stats = disk->PartitionStatsOf(kTp);
      stalled = stats.ok() && stats->stalled;
      if (!stalled) break;
      if (absl::Now() > deadline) break;
      absl::SleepFor(absl::Milliseconds(2));
    }
    if (stalled) Note("fault: still stalled after 3 s");
    absl::StatusOr<int64_t> again = TakeRole(*disk, m.role, m.epoch);
    if (again.ok() && !stalled) return "";
    Note("fault: engine restarted");
    disk.reset();
    disk = NewDisk();
    if (disk == nullptr) return "the disk engine did not reopen";
    again = TakeRole(*disk, m.role, m.epoch);
    if (!again.ok()) {
      return absl::StrCat(
          "the disk engine does not take the partition over "
          "again after the fault: ",
          Show(again));
    }
    return "";
  }

  // After a fault step: the disk log is the model's, or the model's plus
  // exactly `candidate` (whose append failed on disk; the model then
  // appends it too), and its log start is the model's or `delete_target`.
  std::string Reconcile(DiskEngine& disk, MemoryEngine& memory, Model& m,
                        const Candidate* candidate,
                        std::optional<int64_t> delete_target) {
    absl::StatusOr<LogImage> d = ReadImage(disk);
    absl::StatusOr<LogImage> mem = ReadImage(memory);
    if (!d.ok() || !mem.ok()) {
      return absl::StrCat("reading the logs: disk ", Show(d.status()),
                          ", memory ", Show(mem.status()));
    }
    if (delete_target.has_value() && d->start == *delete_target &&
        mem->start < d->start) {
      Note("fault: DeleteRecords took effect");
      absl::StatusOr<int64_t> deleted =
          memory.DeleteRecords(kTp, *delete_target);
      if (!deleted.ok() || *deleted != *delete_target) {
        return absl::StrCat("memory delete records: ", Show(deleted));
      }
      mem = ReadImage(memory);
      if (!mem.ok()) return "memory read";
    }
    absl::StatusOr<std::vector<AbortedTransaction>> aborted =
        Aborted(memory, *mem);
    if (!aborted.ok()) return "memory aborted transactions";
    Comparison c =
        Compare(*d, *mem, m.compacted_below, m.latest_comparable, *aborted);
    switch (c.relation) {
      case Relation::kSame:
        return "";
      case Relation::kDiskIsAPrefix:
        return absl::StrCat(
            "DATA LOST after an injected fault: the disk log "
            "ends at ",
            d->end, ", the model's at ", mem->end, " (durable end ",
            m.durable_end, ")");
      case Relation::kDifferent:
        return absl::StrCat("after the fault: ", c.why);
      case Relation::kDiskHasOneMore:
        break;
    }
    const ImageBatch& extra = d->batches.back();
    if (candidate == nullptr || extra.base != mem->end ||
        !SameBatchButForLeaderFields(extra.bytes, candidate->batch)) {
      return absl::StrCat("after the fault: ", c.why,
                          ", not the batch whose append failed");
    }
    Note("fault: the failed batch was stored");
    absl::StatusOr<AppendResult> applied =
        candidate->follower
            ? FollowerAppendAndWait(memory, m.epoch, candidate->acks,
                                    candidate->batch)
            : memory.AppendAndWait(kTp, m.epoch, candidate->acks,
                                   candidate->batch);
    if (!applied.ok() || applied->base_offset != extra.base ||
        applied->last_offset != extra.last) {
      return absl::StrCat("the model refuses the batch the disk engine kept: ",
                          applied.ok() ? absl::StrCat(applied->base_offset)
                                       : applied.status().ToString());
    }
    absl::StatusOr<LogImage> again = ReadImage(memory);
    if (!again.ok()) return "memory read";
    c = Compare(*d, *again, m.compacted_below, m.latest_comparable, *aborted);
    if (c.relation != Relation::kSame) {
      return absl::StrCat("after applying the kept batch: ", c.why);
    }
    return "";
  }

  // One injected fault before one operation (see the file comment).
  std::string FaultStep(const Op& op, Model& m,
                        std::unique_ptr<DiskEngine>& disk,
                        MemoryEngine& memory) {
    const FaultSite& site =
        kFaultSites[op.a % (sizeof(kFaultSites) / sizeof(kFaultSites[0]))];
    Note(absl::StrCat("fault: ", site.name));
    if (std::string d = Settle(*disk, memory, m); !d.empty()) return d;
    test::Fault fault(site.op, site.error);
    fault.path = test::PathPattern::Substring(site.path);
    fault.torn_write_bytes = op.b % 3 == 0 ? 0 : 1 + op.b % 200;
    std::optional<Candidate> candidate;
    std::optional<int64_t> delete_target;
    bool disk_failed = false;
    std::string divergence;
    switch (site.inner) {
      case Inner::kAppend:
      case Inner::kAppendAll:
      case Inner::kAgeRollAppend: {
        if (site.inner == Inner::kAgeRollAppend) {
          clock().Advance(kSegmentMs + absl::Seconds(1));
        }
        Op append = op;
        if (site.inner != Inner::kAppend) append.b = op.b / 4 * 4 + 2;
        const AppendKind kind = op.b % 3 == 0   ? AppendKind::kIdempotent
                                : op.b % 3 == 1 ? AppendKind::kTransactional
                                                : AppendKind::kPlain;
        Pending a = MakeAppend(append, kind, m);
        std::string sent = a.batch;
        const bool follower = m.role == Role::kFollower;
        if (follower) {
          absl::StatusOr<int64_t> end = LogEnd(memory);
          if (!end.ok()) return "memory log end";
          Op exact = op;
          exact.a = 2;  // the right offset
          exact.b = 2;  // the right epoch
          sent = AsLeaderSent(a.batch, exact, m, *end);
        }
        ffs().InjectFault(fault);
        absl::StatusOr<AppendResult> d =
            follower ? FollowerAppendAndWait(*disk, m.epoch, a.acks, sent)
                     : disk->AppendAndWait(kTp, m.epoch, a.acks, sent);
        ffs().ClearFaults();
        if (d.ok()) {
          absl::StatusOr<AppendResult> mem =
              follower ? FollowerAppendAndWait(memory, m.epoch, a.acks, sent)
                       : memory.AppendAndWait(kTp, m.epoch, a.acks, sent);
          divergence = CompareAppend("append (fault injected)", d, mem);
          if (mem.ok() && divergence.empty()) Accepted(a, *mem, m);
        } else if (RetriableDiskError(d.status())) {
          disk_failed = true;
          candidate = Candidate{sent, follower, a.acks};
        } else {
          // Not an I/O error: the model must refuse it the same way.
          absl::StatusOr<AppendResult> mem =
              follower ? FollowerAppendAndWait(memory, m.epoch, a.acks, sent)
                       : memory.AppendAndWait(kTp, m.epoch, a.acks, sent);
          divergence = CompareAppend("append (fault injected)", d, mem);
        }
        break;
      }
      case Inner::kTakeOver: {
        const int64_t epoch = m.epoch + 1;
        ffs().InjectFault(fault);
        absl::StatusOr<int64_t> d = TakeRole(*disk, m.role, epoch);
        ffs().ClearFaults();
        if (!d.ok()) {
          if (!RetriableDiskError(d.status())) {
            return absl::StrCat("take over (fault injected): ", Show(d));
          }
          disk_failed = true;
          Note("fault: take-over failed");
        }
        // Applied on the memory engine; the disk engine's is re-driven.
        absl::StatusOr<int64_t> mem = TakeRole(memory, m.role, epoch);
        if (!mem.ok()) return absl::StrCat("memory take over: ", Show(mem));
        m.epoch = epoch;
        if (d.ok() && *d != *mem) {
          return absl::StrCat("take over (fault injected): disk ", *d,
                              ", memory ", *mem);
        }
        break;
      }
      case Inner::kDelete: {
        absl::StatusOr<int64_t> hw = memory.HighWatermark(kTp);
        absl::StatusOr<int64_t> start = memory.LogStartOffset(kTp);
        if (!hw.ok() || !start.ok()) return "memory bounds";
        const int64_t target = *start + op.b % (*hw - *start + 1);
        ffs().InjectFault(fault);
        absl::StatusOr<int64_t> d = disk->DeleteRecords(kTp, target);
        ffs().ClearFaults();
        if (d.ok()) {
          absl::StatusOr<int64_t> mem = memory.DeleteRecords(kTp, target);
          if (!mem.ok() || *mem != *d) {
            return absl::StrCat("delete records to ", target,
                                " (fault injected): disk ", *d, ", memory ",
                                Show(mem));
          }
        } else if (RetriableDiskError(d.status())) {
          disk_failed = true;
          delete_target = target;
        } else {
          return absl::StrCat("delete records (fault injected): ", Show(d));
        }
        break;
      }
    }
    if (!divergence.empty()) return divergence;
    if (disk_failed) Note("fault: the disk engine reported an error");
    if (std::string why = RecoverDisk(disk, m); !why.empty()) return why;
    if (site.inner == Inner::kTakeOver) {
      // The re-driven take-over made the log durable.
      absl::StatusOr<int64_t> end = LogEnd(*disk);
      absl::StatusOr<int64_t> mem_end = LogEnd(memory);
      if (!end.ok() || !mem_end.ok() || *end != *mem_end) {
        return absl::StrCat("take over re-driven after the fault: disk ",
                            Show(end), ", memory ", Show(mem_end));
      }
      m.durable_end = std::max(m.durable_end, *end);
    }
    if (std::string why = Reconcile(
            *disk, memory, m, candidate ? &*candidate : nullptr, delete_target);
        !why.empty()) {
      return why;
    }
    ResyncProducers(memory, m);
    return CompareState(*disk, memory, m);
  }

  // Kafka's retention rules (cleaner/retention_policy.h, written out again
  // here): the log start a sweep must leave for `view` at `now`.
  int64_t ExpectedLogStart(const RetentionView& view, absl::Time now) {
    const std::vector<SegmentSummary>& segments = view.segments;
    const size_t active = segments.empty() ? 0 : segments.size() - 1;
    int64_t target = view.log_start_offset;
    // Size: delete the oldest closed segments while what remains is at
    // least retention.bytes.
    uint64_t total = 0;
    for (const SegmentSummary& s : segments) total += s.size_bytes;
    if (total >= variant_.retention_bytes) {
      uint64_t surplus = total - variant_.retention_bytes;
      for (size_t i = 0; i < active && segments[i].size_bytes <= surplus; ++i) {
        surplus -= segments[i].size_bytes;
        target = std::max(target, segments[i + 1].base_offset);
      }
    }
    // Time: delete the oldest closed segments whose newest record (or, if
    // none carries a timestamp, the next dated segment's) is older than
    // retention.ms.
    for (size_t i = 0; i < active; ++i) {
      int64_t date = -1;
      for (size_t j = i; j < segments.size() && date < 0; ++j) {
        date = segments[j].max_timestamp;
      }
      if (date < 0 || absl::FromUnixMillis(date) >= now - kRetentionMs) break;
      target = std::max(target, segments[i + 1].base_offset);
    }
    // Never past the high watermark: back to a segment boundary below it.
    if (target > view.high_watermark) {
      int64_t boundary = view.log_start_offset;
      for (const SegmentSummary& s : segments) {
        if (s.base_offset <= view.high_watermark) {
          boundary = std::max(boundary, s.base_offset);
        }
      }
      target = boundary;
    }
    return std::max(target, view.log_start_offset);
  }

  std::string RetentionStep(Model& m, DiskEngine& disk, MemoryEngine& memory) {
    if (std::string d = Settle(disk, memory, m); !d.empty()) return d;
    // An age roll first, so that the sweep's own finds nothing to do and
    // the segments described are the ones it works on.
    absl::StatusOr<bool> rolled = disk.RollIfAged(kTp);
    if (!rolled.ok()) return absl::StrCat("roll if aged: ", Show(rolled));
    absl::StatusOr<RetentionView> view = disk.DescribeForRetention(kTp);
    if (!view.ok()) return absl::StrCat("describe: ", Show(view.status()));
    const int64_t expected = ExpectedLogStart(*view, clock().Now());
    cleaner::RetentionCleaner::Options options;
    options.check_interval = absl::ZeroDuration();
    options.clock = &clock();
    cleaner::RetentionCleaner retention(&disk, options);
    const cleaner::SweepReport report = retention.RunOnce();
    if (report.errors != 0) {
      return absl::StrCat("retention sweep: ", report.ToString());
    }
    absl::StatusOr<int64_t> start = disk.LogStartOffset(kTp);
    if (!start.ok() || *start != expected) {
      std::string segments;
      for (const SegmentSummary& s : view->segments) {
        absl::StrAppend(&segments, s.base_offset, "+", s.size_bytes, "B@",
                        s.max_timestamp - kStartMs, " ");
      }
      return absl::StrCat("retention: log start ", Show(start), ", expected ",
                          expected, " (log start ", view->log_start_offset,
                          ", hw ", view->high_watermark, ", now ",
                          absl::ToUnixMillis(clock().Now()) - kStartMs,
                          ", segments ", segments, ")");
    }
    if (*start > view->log_start_offset) {
      Note(report.by_size.segments > 0 ? "retention: advanced by size"
                                       : "retention: advanced by time");
      absl::StatusOr<int64_t> mem = memory.DeleteRecords(kTp, *start);
      if (!mem.ok() || *mem != *start) {
        return absl::StrCat("memory delete records to ", *start, ": ",
                            Show(mem));
      }
    } else {
      Note("retention: nothing due");
    }
    return CompareState(disk, memory, m);
  }

  std::string RollStep(Model& m, DiskEngine& disk, MemoryEngine& memory) {
    absl::StatusOr<RetentionView> before = disk.DescribeForRetention(kTp);
    if (!before.ok() || before->segments.empty()) {
      return absl::StrCat("describe: ", Show(before.status()));
    }
    clock().Advance(kSegmentMs + absl::Seconds(1));
    absl::StatusOr<bool> rolled = disk.RollIfAged(kTp);
    if (!rolled.ok()) return absl::StrCat("roll if aged: ", Show(rolled));
    const bool had_data = before->segments.back().size_bytes > 0;
    if (*rolled != had_data) {
      return absl::StrCat("roll if aged: ", *rolled,
                          " with an active segment of ",
                          before->segments.back().size_bytes, " bytes");
    }
    if (*rolled) {
      absl::StatusOr<RetentionView> after = disk.DescribeForRetention(kTp);
      absl::StatusOr<int64_t> end = LogEnd(disk);
      if (!after.ok() || !end.ok() ||
          after->segments.size() != before->segments.size() + 1 ||
          after->segments.back().base_offset != *end) {
        return "the roll did not start a segment at the log end";
      }
    }
    Note(*rolled ? "roll: rolled" : "roll: active segment empty");
    return CompareState(disk, memory, m);
  }

  std::string MoveStep(Model& m, DiskEngine& disk, MemoryEngine& memory) {
    const std::string target =
        m.log_dir == kDefaultDir ? kExtraDir : kDefaultDir;
    absl::StatusOr<std::string> moved = disk.MovePartitionToLogDir(kTp, target);
    if (!moved.ok() || *moved != m.log_dir) {
      return absl::StrCat("move to ", target, ": ", Show(moved), ", expected ",
                          m.log_dir);
    }
    m.log_dir = target;
    Note(absl::StrCat("move: to ", target));
    // The move relinquished (synced) the partition.
    absl::StatusOr<int64_t> end = LogEnd(memory);
    if (end.ok()) m.durable_end = std::max(m.durable_end, *end);
    return CompareState(disk, memory, m);
  }

  std::string TruncateStep(const Op& op, Model& m, DiskEngine& disk,
                           MemoryEngine& memory, bool fully) {
    absl::StatusOr<int64_t> start = memory.LogStartOffset(kTp);
    absl::StatusOr<int64_t> end = LogEnd(memory);
    if (!start.ok() || !end.ok()) return "memory bounds";
    if (fully) {
      // Mostly past the log end (a follower that fell behind the leader's
      // log start), now and then inside the log.
      const int64_t offset = op.b % 3 == 0 ? *start + op.a % (*end - *start + 1)
                                           : *end + op.a % 20;
      absl::Status d = disk.TruncateFullyAndStartAt(kTp, offset);
      absl::Status mem = memory.TruncateFullyAndStartAt(kTp, offset);
      if (GetStorageErrorCode(d) != GetStorageErrorCode(mem)) {
        return absl::StrCat("truncate fully at ", offset, ": disk ", Show(d),
                            ", memory ", Show(mem));
      }
      if (!d.ok()) return "";
      Note("truncate: fully");
      m.durable_end = offset;
      m.compacted_below = 0;
      m.latest_comparable = true;
      m.state_comparable = true;
    } else {
      // Not into the compacted part (mostly): a cut there also reopens
      // transactions whose first batches compaction emptied, and the model
      // cannot follow (below).
      const int64_t low = std::max(*start, m.compacted_below);
      const int64_t offset =
          low > *end || (m.compacted_below > 0 && op.b % 8 != 0)
              ? std::min(low, *end) +
                    static_cast<int64_t>(op.a %
                                         (*end - std::min(low, *end) + 2))
              : *start - 1 + static_cast<int64_t>(op.a % (*end - *start + 3));
      // The model's log before the cut (compacted seeds: which markers go).
      absl::StatusOr<LogImage> before = m.compacted_below > 0
                                            ? ReadImage(memory)
                                            : absl::StatusOr<LogImage>();
      absl::StatusOr<int64_t> d = disk.TruncateTo(kTp, offset);
      absl::StatusOr<int64_t> mem = memory.TruncateTo(kTp, offset);
      if (GetStorageErrorCode(d.status()) !=
          GetStorageErrorCode(mem.status())) {
        return absl::StrCat("truncate to ", offset, ": disk ", Show(d),
                            ", memory ", Show(mem));
      }
      if (!d.ok()) return "";
      if (*d != *mem) {
        // Compaction merges removed batches: a disk batch may cover several
        // of the model's, and the cut is at its base.
        if (!(offset < m.compacted_below && *d < *mem)) {
          return absl::StrCat("truncate to ", offset, ": disk ", *d,
                              ", memory ", *mem);
        }
        absl::StatusOr<int64_t> again = memory.TruncateTo(kTp, *d);
        if (!again.ok() || *again != *d) {
          return absl::StrCat("truncate to ", offset, ": disk ", *d,
                              ", which the model cannot cut at: ", Show(again));
        }
        Note("truncate: inside a compacted batch");
      }
      Note(*d < *end ? "truncate: cut" : "truncate: past the end");
      bool cuts_a_marker = false;
      if (before.ok()) {
        for (const ImageBatch& batch : before->batches) {
          absl::StatusOr<RecordBatchView> view =
              RecordBatchView::ParseHeader(batch.bytes);
          cuts_a_marker |= batch.base >= *d && view.ok() && view->is_control();
        }
      }
      if (*d < m.compacted_below || (m.compacted_below > 0 && cuts_a_marker)) {
        // The cut removed later values of keys whose older ones compaction
        // removed, or the marker of a transaction whose aborted records
        // compaction removed (the transaction is open again): the disk log
        // rightly lacks values the model still has.
        m.compacted_below = std::min(m.compacted_below, *d);
        m.latest_comparable = false;
        m.state_comparable = false;
        Note("truncate: into the compacted part");
      }
      m.durable_end = *d;
    }
    ResyncProducers(memory, m);
    return CompareState(disk, memory, m);
  }

  std::string CompactStep(Model& m, DiskEngine& disk, MemoryEngine& memory) {
    if (std::string d = Settle(disk, memory, m); !d.empty()) return d;
    OffsetMap map(1 << 20);
    CompactionRequest request;
    request.now_ms = clock().NowMillis();
    request.map = &map;
    absl::StatusOr<CompactionReport> report = disk.Compact(kTp, request);
    if (!report.ok()) return absl::StrCat("compact: ", Show(report.status()));
    if (report->segments_replaced > 0) {
      m.compacted_below = std::max(m.compacted_below, report->map_end);
      Note(report->records_removed > 0 ? "compact: records removed"
                                       : "compact: segments rewritten");
    } else {
      Note("compact: nothing to clean");
    }
    absl::StatusOr<LogImage> d = ReadImage(disk);
    absl::StatusOr<LogImage> mem = ReadImage(memory);
    if (!d.ok() || !mem.ok()) return "reading the logs";
    absl::StatusOr<std::vector<AbortedTransaction>> aborted =
        Aborted(memory, *mem);
    if (!aborted.ok()) return "memory aborted transactions";
    Comparison c =
        Compare(*d, *mem, m.compacted_below, m.latest_comparable, *aborted);
    if (c.relation != Relation::kSame) {
      return absl::StrCat("after compaction: ",
                          c.why.empty() ? "lengths differ" : c.why);
    }
    return CompareState(disk, memory, m);
  }

  std::string Step(const Op& op, Model& m, std::unique_ptr<DiskEngine>& disk,
                   MemoryEngine& memory) {
    switch (op.kind) {
      case OpKind::kAppendPlain:
        return AppendStep(op, AppendKind::kPlain, m, *disk, memory);
      case OpKind::kAppendIdempotent:
        return AppendStep(op, AppendKind::kIdempotent, m, *disk, memory);
      case OpKind::kRetryIdempotent:
        return AppendStep(op, AppendKind::kRetry, m, *disk, memory);
      case OpKind::kAppendTransactional:
        return AppendStep(op, AppendKind::kTransactional, m, *disk, memory);
      case OpKind::kEndTransaction:
        return AppendStep(op, AppendKind::kMarker, m, *disk, memory);
      case OpKind::kRead:
      case OpKind::kReadCommitted: {
        if (std::string d = Settle(*disk, memory, m); !d.empty()) return d;
        absl::StatusOr<int64_t> end = memory.HighWatermark(kTp);
        const int64_t offset = end.ok() ? op.a % (*end + 2) : op.a % 8;
        return CompareRead(*disk, memory, offset,
                           op.kind == OpKind::kRead || !m.state_comparable
                               ? Isolation::kReadUncommitted
                               : Isolation::kReadCommitted,
                           m);
      }
      case OpKind::kOffsetForTimestamp: {
        if (std::string d = Settle(*disk, memory, m); !d.empty()) return d;
        // Now and then -1 (latest) and -2 (earliest).
        const int64_t timestamp =
            op.b % 5 == 0
                ? -1 - static_cast<int64_t>(op.b % 2)
                : kStartMs - 10 + op.a % (m.timestamp - kStartMs + 20);
        const Isolation isolation = op.b % 2 == 0 && m.state_comparable
                                        ? Isolation::kReadCommitted
                                        : Isolation::kReadUncommitted;
        absl::StatusOr<OffsetAndTimestamp> d =
            disk->OffsetForTimestamp(kTp, timestamp, isolation);
        absl::StatusOr<OffsetAndTimestamp> mem =
            memory.OffsetForTimestamp(kTp, timestamp, isolation);
        const auto show = [&]() {
          return absl::StrCat(
              "at ", timestamp, ": disk ",
              d.ok() ? absl::StrCat(d->offset, "/", d->timestamp)
                     : d.status().ToString(),
              ", memory ",
              mem.ok() ? absl::StrCat(mem->offset, "/", mem->timestamp)
                       : mem.status().ToString());
        };
        if (GetStorageErrorCode(d.status()) !=
            GetStorageErrorCode(mem.status())) {
          return show();
        }
        if (!d.ok() ||
            (d->offset == mem->offset && d->timestamp == mem->timestamp)) {
          return "";
        }
        // Compaction may have removed the record found: the disk engine
        // then finds a later one (timestamps never decrease here).
        if (mem->offset >= 0 && mem->offset < m.compacted_below &&
            d->offset > mem->offset && d->timestamp >= mem->timestamp) {
          Note("offset-for-timestamp: compacted record");
          return "";
        }
        return show();
      }
      case OpKind::kDeleteRecords: {
        if (std::string d = Settle(*disk, memory, m); !d.empty()) return d;
        absl::StatusOr<int64_t> end = memory.HighWatermark(kTp);
        const int64_t target = end.ok() ? op.a % (*end + 2) : 0;
        absl::StatusOr<int64_t> d = disk->DeleteRecords(kTp, target);
        absl::StatusOr<int64_t> mem = memory.DeleteRecords(kTp, target);
        if (GetStorageErrorCode(d.status()) !=
                GetStorageErrorCode(mem.status()) ||
            (d.ok() && *d != *mem)) {
          return absl::StrCat("to ", target, ": disk ", Show(d), ", memory ",
                              Show(mem));
        }
        return "";
      }
      case OpKind::kNewEpoch:
        return BothTakeRole(*disk, memory, m, Role::kLeader, m.epoch + 1);
      case OpKind::kRelinquishAndTakeOver: {
        absl::Status d = disk->Relinquish(kTp);
        absl::Status mem = memory.Relinquish(kTp);
        if (GetStorageErrorCode(d) != GetStorageErrorCode(mem)) {
          return absl::StrCat("relinquish: disk ", d.ToString(), ", memory ",
                              mem.ToString());
        }
        return BothTakeRole(*disk, memory, m, Role::kLeader, m.epoch + 1);
      }
      case OpKind::kCrash:
        return CrashStep(op, m, disk, memory, /*sync_first=*/true);
      case OpKind::kPowerLoss:
        return CrashStep(op, m, disk, memory, /*sync_first=*/false);
      case OpKind::kRoll:
        return RollStep(m, *disk, memory);
      case OpKind::kRetention:
        return RetentionStep(m, *disk, memory);
      case OpKind::kMove:
        return MoveStep(m, *disk, memory);
      case OpKind::kBecomeFollower:
        return BothTakeRole(*disk, memory, m, Role::kFollower, m.epoch + 1);
      case OpKind::kTruncate:
        return TruncateStep(op, m, *disk, memory, /*fully=*/false);
      case OpKind::kTruncateFully:
        return TruncateStep(op, m, *disk, memory, /*fully=*/true);
      case OpKind::kSetHighWatermark: {
        absl::StatusOr<int64_t> hw = memory.HighWatermark(kTp);
        absl::StatusOr<int64_t> end = LogEnd(memory);
        if (!hw.ok() || !end.ok()) return "memory bounds";
        const int64_t offset =
            op.b % 4 == 0 ? *hw - 1 : *hw + op.a % (*end - *hw + 3);
        absl::Status d = disk->SetHighWatermark(kTp, offset);
        absl::Status mem = memory.SetHighWatermark(kTp, offset);
        if (GetStorageErrorCode(d) != GetStorageErrorCode(mem)) {
          return absl::StrCat("set high watermark ", offset, ": disk ", Show(d),
                              ", memory ", Show(mem));
        }
        Note(d.ok() ? "set-high-watermark: set"
                    : "set-high-watermark: refused");
        if (!d.ok()) return "";
        return CompareState(*disk, memory, m);
      }
      case OpKind::kFault:
        return FaultStep(op, m, disk, memory);
      case OpKind::kCompact:
        return CompactStep(m, *disk, memory);
      case OpKind::kInspect:
        return CompareState(*disk, memory, m);
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

  Variant variant_;
  uint64_t seed_ = 0;
  std::unique_ptr<test::FaultInjectingFileSystem> ffs_;
  // KAAS_OPFUZZ_TRACE=1 prints the bounds after every step of the shrunk
  // replay.
  bool trace_ = false;
  // Counted over the seeds' runs (not the shrinking): steps per kind, and
  // what they did.
  bool counting_ = false;
  std::map<std::string, int64_t> steps_;
  std::map<std::string, int64_t> outcomes_;
};

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

TEST_F(OpFuzzTest, DiskEngineMatchesTheMemoryEngine) {
  const int seeds = EnvInt("KAAS_OPFUZZ_SEEDS", 12);
  const int first = EnvInt("KAAS_OPFUZZ_FIRST_SEED", 1);
  if (const char* replay = std::getenv("KAAS_OPFUZZ_REPLAY")) {
    // A replay as a failure printed it, with the variant of the first seed.
    variant_ = VariantOf(first);
    seed_ = first;
    trace_ = std::getenv("KAAS_OPFUZZ_TRACE") != nullptr;
    const std::string divergence = Run(Parse(replay));
    EXPECT_EQ(divergence, "");
    return;
  }
  for (int seed = first; seed < first + seeds; ++seed) {
    variant_ = VariantOf(seed);
    seed_ = seed;
    const std::vector<Op> ops = Generate(seed, 60, variant_);
    counting_ = true;
    const std::string divergence = Run(ops);
    counting_ = false;
    if (divergence.empty()) continue;
    trace_ = std::getenv("KAAS_OPFUZZ_TRACE") != nullptr;
    if (EnvInt("KAAS_OPFUZZ_SHRINK", 1) == 0) {
      // The whole sequence, traced.
      FAIL() << "seed " << seed << ": " << divergence << " (again: " << Run(ops)
             << ")";
    }
    trace_ = false;
    const std::vector<Op> shrunk = Shrink(ops);
    trace_ = std::getenv("KAAS_OPFUZZ_TRACE") != nullptr;
    FAIL() << "seed " << seed << ": " << divergence << "\nshrunk to "
           << shrunk.size() << " steps (" << Run(shrunk) << "):\n  "
           << Describe(shrunk);
  }
  std::vector<std::string> steps;
  for (const auto& [name, count] : steps_) {
    steps.push_back(absl::StrCat(name, " ", count));
  }
  std::vector<std::string> outcomes;
  for (const auto& [name, count] : outcomes_) {
    outcomes.push_back(absl::StrCat(name, " ", count));
  }
  std::cout << "opfuzz: steps: " << absl::StrJoin(steps, ", ") << "\n"
            << "opfuzz: outcomes: " << absl::StrJoin(outcomes, ", ") << "\n"
            << "opfuzz: seeds " << first << ".." << first + seeds - 1
            << " agree\n";
  if (first == 1 && seeds >= 12) {
    // The default seeds exercise every kind and its interesting outcomes.
    for (int kind = 0; kind < static_cast<int>(OpKind::kCount); ++kind) {
      EXPECT_GT(steps_[OpName(static_cast<OpKind>(kind))], 0)
          << OpName(static_cast<OpKind>(kind));
    }
    for (const char* outcome :
         {"roll: rolled", "retention: advanced by size", "move: to fast",
          "move: to default", "follower: appended", "truncate: cut",
          "truncate: fully", "set-high-watermark: set",
          "fault: the disk engine reported an error",
          "power loss: nothing lost", "compact: records removed"}) {
      EXPECT_GT(outcomes_[outcome], 0) << outcome;
    }
  }
}

}  // namespace
}  // namespace kaas
