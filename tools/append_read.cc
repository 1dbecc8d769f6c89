// File: tools/append_read.cc
//
// `kaaslog append` (RecordBatches from stdin into a partition, one result
// line per batch) and `kaaslog read` (a partition's batches to stdout,
// byte-exact), both through the production DiskEngine.

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "fs/posix_file_system.h"
#include "storage/batch/record_batch.h"
#include "storage/common/api_types.h"
#include "storage/common/topic_name.h"
#include "storage/engine/disk_engine.h"
#include "storage/metadata/partition_files.h"
#include "storage/segment/segment_name.h"
#include "tools/cli.h"
#include "tools/read_only_file_system.h"
#include "tools/subcommands.h"

ABSL_FLAG(int64_t, epoch, -1,
          "Take the partition over at this leader epoch first (-1: its "
          "current epoch, 1 for a new partition).");
ABSL_FLAG(std::string, acks, "all",
          "all: each batch is durable (fdatasync'ed) before its line is "
          "printed; 1: written to the log (page cache).");
ABSL_FLAG(int64_t, max_batch_bytes, int64_t{64} << 20,
          "Largest batch accepted on stdin; a larger batchLength is taken "
          "for lost framing.");
ABSL_FLAG(int64_t, offset, -1,
          "First offset to read (-1: the log start offset).");
ABSL_FLAG(int64_t, max_bytes, 0,
          "0: read everything from --offset to the end, in 1 MiB fetches. "
          "N > 0: exactly one fetch of at most N bytes (the first batch is "
          "returned whole even when larger, as Kafka does).");
ABSL_FLAG(std::string, isolation, "read_uncommitted",
          "read_uncommitted (up to the high watermark) or read_committed (up "
          "to the last stable offset; aborted transactions go to stderr).");

namespace kaas::tools {

using ::kaas::partition::OpenReport;
using ::kaas::partition::Partition;
namespace {

constexpr size_t kReadChunkBytes = 1 << 20;
// stdin is read at most this much at a time (memory follows the input).
constexpr size_t kInputChunkBytes = 1 << 20;

// Reads up to `n` bytes from `fd`, stopping early only at end of input.
absl::StatusOr<size_t> ReadInput(int fd, size_t n, char* dst) {
  size_t got = 0;
  while (got < n) {
    ssize_t r = ::read(fd, dst + got, n - got);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          absl::StrCat("reading stdin: ", std::strerror(errno)));
    }
    got += static_cast<size_t>(r);
  }
  return got;
}

// The topic partition named by --topic / --partition, or a usage error.
absl::StatusOr<TopicPartition> FlagTopicPartition() {
  TopicPartition tp{absl::GetFlag(FLAGS_topic), absl::GetFlag(FLAGS_partition)};
  if (tp.topic.empty())
    return absl::InvalidArgumentError("--topic is required");
  KAAS_RETURN_IF_ERROR(ValidateTopicName(tp.topic));
  KAAS_RETURN_IF_ERROR(ValidatePartition(tp.partition));
  return tp;
}

absl::StatusOr<std::unique_ptr<DiskEngine>> OpenEngine() {
  DiskEngine::Options options;
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.io_threads = 2;
  return DiskEngine::Create(std::move(options));
}

// One framed batch read from stdin, or why the input ended.
struct InputBatch {
  std::string bytes;
  // Set when this is the last thing read: the input ended (cleanly when
  // `error` is OK and `bytes` is empty) or its framing was lost.
  bool last = false;
  absl::Status error;
};

// Reads the next batch: 12 bytes, then the rest announced by batchLength.
absl::StatusOr<InputBatch> ReadBatch(int fd, uint64_t input_position,
                                     int64_t max_batch_bytes) {
  InputBatch batch;
  batch.bytes.resize(batch_layout::kLogOverhead);
  KAAS_ASSIGN_OR_RETURN(size_t got,
                        ReadInput(fd, batch.bytes.size(), batch.bytes.data()));
  if (got < batch.bytes.size()) {
    batch.last = true;
    if (got > 0) {
      batch.error = StorageError(
          StorageErrorCode::kCorruptMessage,
          absl::StrFormat("truncated batch at input byte %d: the input ends "
                          "after %d bytes of the %d-byte length prefix",
                          input_position, got, batch_layout::kLogOverhead));
    }
    batch.bytes.clear();
    return batch;
  }
  absl::StatusOr<size_t> size = PeekBatchSize(batch.bytes);
  if (!size.ok()) {
    batch.last = true;
    batch.error = StorageError(
        StorageErrorCode::kCorruptMessage,
        absl::StrFormat("at input byte %d: %s; framing is lost, the rest of "
                        "the input is ignored",
                        input_position, size.status().message()));
    return batch;
  }
  if (*size > static_cast<uint64_t>(max_batch_bytes)) {
    batch.last = true;
    batch.error = StorageError(
        StorageErrorCode::kMessageTooLarge,
        absl::StrFormat("batch at input byte %d announces %d bytes, more than "
                        "--max_batch_bytes=%d; framing is taken for lost, the "
                        "rest of the input is ignored",
                        input_position, *size, max_batch_bytes));
    return batch;
  }
  // The rest, as it arrives: a length field claiming gigabytes costs only
  // the bytes that are really there.
  const size_t body = *size - batch_layout::kLogOverhead;
  got = 0;
  while (got < body) {
    const size_t chunk = std::min(kInputChunkBytes, body - got);
    const size_t at = batch.bytes.size();
    batch.bytes.resize(at + chunk);
    KAAS_ASSIGN_OR_RETURN(size_t n,
                          ReadInput(fd, chunk, batch.bytes.data() + at));
    batch.bytes.resize(at + n);
    got += n;
    if (n < chunk) break;
  }
  if (got < body) {
    batch.last = true;
    batch.error = StorageError(
        StorageErrorCode::kCorruptMessage,
        absl::StrFormat("truncated batch at input byte %d: batchLength %d "
                        "announces %d bytes, the input ends after %d",
                        input_position, *size - batch_layout::kLogOverhead,
                        *size, batch_layout::kLogOverhead + got));
  }
  return batch;
}

// The epoch a leader of `tp` holds now: what recovery adopts, the higher of
// the manifest's and the newest segment's (0 for a new partition).
int64_t CurrentEpoch(DiskEngine& engine, const TopicPartition& tp) {
  absl::StatusOr<std::string> dir = engine.PartitionDir(tp);
  if (!dir.ok()) return 0;
  int64_t epoch = 0;
  absl::StatusOr<metadata::PartitionManifest> manifest =
      metadata::ReadManifest(engine.fs(), *dir);
  if (manifest.ok()) epoch = manifest->leader_epoch();
  absl::StatusOr<std::vector<std::string>> names = engine.fs().ListDir(*dir);
  if (names.ok()) {
    for (const std::string& name : *names) {
      if (std::optional<segment::ParsedSegmentFile> parsed =
              segment::ParseSegmentFileName(name)) {
        epoch = std::max<int64_t>(epoch, parsed->id.epoch);
      }
    }
  }
  return epoch;
}

// Takes the partition over at --epoch, or at its current epoch (1 for a new
// partition). Returns the epoch appends use.
absl::StatusOr<int64_t> TakeOverAtFlagEpoch(DiskEngine& engine,
                                            const TopicPartition& tp) {
  int64_t epoch = absl::GetFlag(FLAGS_epoch);
  if (epoch == -1) epoch = std::max<int64_t>(CurrentEpoch(engine, tp), 1);
  // Below the partition's epoch this fails: a deposed leader is fenced.
  KAAS_RETURN_IF_ERROR(engine.TakeOver(tp, epoch).status());
  return epoch;
}

int RunAppend(const CommandLine& command_line) {
  const Subcommand& self = AppendSubcommand();
  absl::StatusOr<TopicPartition> tp = FlagTopicPartition();
  if (!tp.ok()) return UsageError(self, tp.status().message());
  std::string acks_flag = absl::GetFlag(FLAGS_acks);
  if (acks_flag != "all" && acks_flag != "1") {
    return UsageError(self, "--acks must be all or 1");
  }
  Acks acks = acks_flag == "all" ? Acks::kAll : Acks::kLeader;
  int64_t max_batch_bytes = absl::GetFlag(FLAGS_max_batch_bytes);
  if (max_batch_bytes < static_cast<int64_t>(batch_layout::kHeaderSize)) {
    return UsageError(self, "--max_batch_bytes is below a batch header");
  }
  const int64_t epoch_flag = absl::GetFlag(FLAGS_epoch);
  if (epoch_flag < -1 || epoch_flag > kMaxLeaderEpoch) {
    return UsageError(self,
                      absl::StrCat("--epoch=", epoch_flag,
                                   " is no Kafka leader epoch (0 to 2^31-1, "
                                   "or -1 for the partition's current one)"));
  }

  absl::StatusOr<std::unique_ptr<DiskEngine>> engine = OpenEngine();
  if (!engine.ok()) return Failure(self, ErrorLine(engine.status()));
  absl::StatusOr<int64_t> epoch = TakeOverAtFlagEpoch(**engine, *tp);
  if (!epoch.ok()) {
    return Failure(self, absl::StrCat("cannot take ", tp->ToString(),
                                      " over: ", ErrorLine(epoch.status())));
  }

  bool failed = false;
  uint64_t input_position = 0;
  while (true) {
    absl::StatusOr<InputBatch> batch =
        ReadBatch(STDIN_FILENO, input_position, max_batch_bytes);
    if (!batch.ok()) {
      failed = true;
      std::cerr << "kaaslog append: " << batch.status().message() << "\n";
      break;
    }
    if (!batch->error.ok()) {
      failed = true;
      std::cout << ErrorLine(batch->error) << std::endl;
    } else if (!batch->bytes.empty()) {
      absl::StatusOr<AppendResult> result =
          (*engine)->AppendAndWait(*tp, *epoch, acks, batch->bytes);
      if (result.ok()) {
        std::cout << "offset=" << result->base_offset
                  << (result->duplicate ? " duplicate" : "") << std::endl;
      } else {
        failed = true;
        std::cout << ErrorLine(result.status()) << std::endl;
      }
    }
    if (batch->last) break;
    input_position += batch->bytes.size();
  }
  if (absl::Status status = (*engine)->Relinquish(*tp); !status.ok()) {
    failed = true;
    std::cerr << "kaaslog append: relinquishing " << tp->ToString() << ": "
              << status << "\n";
  }
  return failed ? kExitProblems : kExitOk;
}

// Reads continue across offsets the log does not hold (lost to damage that
// recovery reported, or compacted away): says so on stderr for every gap
// between `from` and the batches of `records`, never silently.
void ReportSkippedOffsets(const TopicPartition& tp, int64_t from,
                          const absl::Cord& records) {
  const std::string bytes(records);
  int64_t expected = from;
  for (absl::string_view rest = bytes; !rest.empty();) {
    absl::StatusOr<size_t> size = PeekBatchSize(rest);
    if (!size.ok() || *size > rest.size()) return;
    const int64_t base = static_cast<int64_t>(ReadBigEndian64(rest.data()));
    if (base > expected) {
      std::cerr << "kaaslog read: " << tp.ToString() << ": offsets " << expected
                << ".." << base - 1 << " are not in the log (skipped)\n";
    }
    const int64_t last =
        base + ReadBigEndian32(rest.data() + batch_layout::kLastOffsetDelta);
    expected = std::max(expected, last + 1);
    rest.remove_prefix(*size);
  }
}

int RunRead(const CommandLine& command_line) {
  const Subcommand& self = ReadSubcommand();
  absl::StatusOr<TopicPartition> tp = FlagTopicPartition();
  if (!tp.ok()) return UsageError(self, tp.status().message());
  std::string isolation_flag = absl::GetFlag(FLAGS_isolation);
  if (isolation_flag != "read_uncommitted" &&
      isolation_flag != "read_committed") {
    return UsageError(self,
                      "--isolation must be read_uncommitted or read_committed");
  }
  Isolation isolation = isolation_flag == "read_committed"
                            ? Isolation::kReadCommitted
                            : Isolation::kReadUncommitted;
  int64_t max_bytes = absl::GetFlag(FLAGS_max_bytes);
  if (max_bytes < 0) return UsageError(self, "--max_bytes must be >= 0");

  // Reading never writes: a read-only engine over a filesystem that refuses
  // every change opens the partition as recovery would see it (a read-only
  // or full data dir, or one another engine leads, can be read).
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  ReadOnlyFileSystem read_only(fs::PosixFileSystem::Default());
  DiskEngine::Options options;
  options.data_dir = data_dir;
  options.fs = &read_only;
  options.read_only = true;
  options.io_threads = 1;
  options.producer_expiry_interval = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      DiskEngine::Create(std::move(options));
  if (!engine.ok()) return Failure(self, ErrorLine(engine.status()));
  const std::vector<TopicPartition>& on_disk = (*engine)->PartitionsOnDisk();
  if (std::find(on_disk.begin(), on_disk.end(), *tp) == on_disk.end()) {
    return Failure(self, absl::StrCat("error=UNKNOWN_TOPIC_OR_PARTITION no "
                                      "partition ",
                                      tp->ToString(), " in ", data_dir));
  }
  OpenReport report;
  absl::StatusOr<std::shared_ptr<Partition>> partition =
      (*engine)->OpenReadOnly(*tp, &report);
  if (!partition.ok()) {
    return Failure(self, absl::StrCat("cannot open ", tp->ToString(), ": ",
                                      ErrorLine(partition.status())));
  }
  for (const std::string& problem : report.problems) {
    std::cerr << "kaaslog read: " << tp->ToString() << ": opening it, recovery "
              << problem << " (read-only: nothing was changed)\n";
  }
  int64_t offset = absl::GetFlag(FLAGS_offset);
  if (offset < 0) offset = (*partition)->LogStartOffset();
  const int64_t end = isolation == Isolation::kReadCommitted
                          ? (*partition)->LastStableOffset()
                          : (*partition)->HighWatermark();

  int64_t batches = 0;
  std::set<std::pair<int64_t, int64_t>> aborted_seen;
  absl::Status status;
  int64_t next = offset;
  do {
    size_t fetch_bytes =
        max_bytes > 0 ? static_cast<size_t>(max_bytes) : kReadChunkBytes;
    absl::StatusOr<ReadResult> result =
        (*partition)->Read(next, fetch_bytes, isolation);
    if (!result.ok()) {
      status = result.status();
      break;
    }
    ReportSkippedOffsets(*tp, next, result->records);
    for (absl::string_view chunk : result->records.Chunks()) {
      std::cout.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    }
    // What was read stays written even if a later fetch fails.
    std::cout.flush();
    for (const AbortedTransaction& aborted : result->aborted_transactions) {
      if (!aborted_seen.insert({aborted.producer_id, aborted.first_offset})
               .second) {
        continue;
      }
      std::cerr << "aborted transaction: producer_id=" << aborted.producer_id
                << " first_offset=" << aborted.first_offset
                << " last_offset=" << aborted.last_offset << "\n";
    }
    batches += result->batches;
    if (result->batches == 0) break;
    next = result->next_offset;
  } while (max_bytes == 0 && next < end);
  (*partition)->Abandon();
  std::cerr << "read " << Plural(batches, "batch", "batches") << " of "
            << tp->ToString() << " from offset " << offset << "; next offset "
            << next
            << (isolation == Isolation::kReadCommitted ? ", last stable offset "
                                                       : ", high watermark ")
            << end << (status.ok() ? "" : ", then the next fetch failed")
            << "\n";
  if (!status.ok()) return Failure(self, ErrorLine(status));
  return kExitOk;
}

}  // namespace

const Subcommand& AppendSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "append";
    subcommand->arguments = "< BATCHES";
    subcommand->summary =
        "Append the v2 RecordBatches read from stdin to a partition.";
    subcommand->details =
        "Reads concatenated Kafka v2 RecordBatches from stdin (each framed by "
        "its\n"
        "first 12 bytes: baseOffset, batchLength), takes the partition over\n"
        "(creating it if needed) and appends each batch. Prints exactly one "
        "line\n"
        "per input batch, in order:\n"
        "  offset=<base offset>             appended at this offset\n"
        "  offset=<base offset> duplicate   an idempotent retry: already "
        "there\n"
        "  error=<KAFKA_ERROR_NAME> <why>   rejected; later batches still go "
        "in\n"
        "A truncated last batch gets an error line. A batchLength below the "
        "v2\n"
        "minimum or above --max_batch_bytes loses the framing: it gets an "
        "error\n"
        "line and the rest of the input is ignored. The partition is\n"
        "relinquished at the end, so everything appended is persisted.\n";
    subcommand->exit_status = "0 all batches appended, 1 any batch failed";
    subcommand->flags = {"data_dir", "topic", "partition",
                         "epoch",    "acks",  "max_batch_bytes"};
    subcommand->run = RunAppend;
    return subcommand;
  }();
  return *subcommand;
}

const Subcommand& ReadSubcommand() {
  static const Subcommand* const subcommand = [] {
    auto* subcommand = new Subcommand;
    subcommand->name = "read";
    subcommand->arguments = "> BATCHES";
    subcommand->summary =
        "Write a partition's batches to stdout, byte-exact as stored.";
    subcommand->details =
        "Opens the partition read-only, as its leader would see it after\n"
        "recovery (nothing is written: a read-only or full data dir, or one\n"
        "another engine leads, can be read; what recovery would change is\n"
        "printed to stderr), and writes the stored RecordBatches to stdout,\n"
        "concatenated, exactly as the engine returns them (base offsets as\n"
        "assigned). By default reads everything from --offset to the high\n"
        "watermark (or the last stable offset with "
        "--isolation=read_committed)\n"
        "in 1 MiB fetches; --max_bytes=N makes it exactly one fetch. With\n"
        "read_committed the aborted transactions of the range are printed to\n"
        "stderr, one line each. A summary line goes to stderr.\n";
    subcommand->exit_status = "0 ok, 1 error (e.g. OFFSET_OUT_OF_RANGE)";
    subcommand->flags = {"data_dir", "topic",     "partition",
                         "offset",   "max_bytes", "isolation"};
    subcommand->run = RunRead;
    return subcommand;
  }();
  return *subcommand;
}

}  // namespace kaas::tools
