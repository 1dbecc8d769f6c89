// File: testing/cephfs/engine_child.cc
//
// One DiskEngine in a process of its own, driven line by line over stdin by
// the shared-volume scenario tests (cephfs_scenarios_test.sh), so that two
// engines on two ceph-fuse mounts of one CephFS are two real processes and
// two real filesystem clients. Each command line gets exactly one answer
// line on stdout:
//   ok [values...]
//   err <code> <message>   (code: StorageErrorCodeName, e.g. NOT_LEADER)
// (a malformed command is `err INVALID_REQUEST ...`; the child goes on).
//
// Commands (T: topic, P: partition, E: leader epoch):
//   takeover T P E            TakeOver; ok <log end offset>
//   relinquish T P            Relinquish; ok
//   append T P E TAG N [BYTES]
//                             N acks=all appends, one record each, values
//                             "TAG-0" ... "TAG-<N-1>" (padded with 'x' to
//                             BYTES bytes if given); stops at the first
//                             failure: ok <first offset> <last offset>, or
//                             err <code> acked=<how many> <message>
//   stream T P E TAG          appends "TAG-0", "TAG-1", ... with acks=all
//                             until one fails, answering each acknowledged
//                             one with `acked <offset> <value>` and the
//                             failure with the err line (for SIGKILL tests)
//   read T P                  every record from the log start to the high
//                             watermark: ok <log start> <high watermark>
//                             <count> followed by <offset>:<value> for each
//                             (values longer than 40 bytes as len=<n>)
//   delete_records T P O      DeleteRecords(O, -1: the high watermark);
//                             ok <new log start>
//   retention T P RETENTION_BYTES
//                             sets the topic's retention.bytes, reloads the
//                             config and runs one retention sweep; ok
//                             <log start>
//   delete_partition T P      DeletePartition; ok
//   abandon T                 AbandonTopic; ok <partitions closed>
//   stamp T ID                writes the topic dir's identity stamp; ok
//   incarnation T unknown|pending|ID
//                             what this engine's broker believes of topic
//                             T's incarnation (applies from the next open)
//   fence FIRST N EPOCH       FenceProducerEpoch(FIRST .. FIRST+N-1, EPOCH)
//   fenced T P E FIRST N EPOCH
//                             appends one batch per producer FIRST ..
//                             FIRST+N-1 at producer epoch EPOCH-1 to the led
//                             partition: ok <how many were refused as
//                             fenced>
//   fds PREFIX                ok <open descriptors of this process whose
//                             target starts with PREFIX>
//   quit                      Drain and exit 0
//
// Flags: --data_dir (the log dir, on one mount), --segment_bytes.
//
// Thread-safety: one thread reads commands and runs them in order.

#include <dirent.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "base/storage_error.h"
#include "cleaner/retention_cleaner.h"
#include "fs/posix_file_system.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/topic_config.h"
#include "storage/engine/topic_identity.h"
#include "testing/batch_builder.h"
#include "testing/stored_records.h"

ABSL_FLAG(std::string, data_dir, "", "The engine's log dir.");
ABSL_FLAG(int64_t, segment_bytes, 1 << 20, "Segment size in bytes.");

namespace kaas::test {
namespace {

// What this process's broker believes of each topic's incarnation; Unknown
// for a topic never named.
class IncarnationTable : public TopicIdentityResolver {
 public:
  void Set(const std::string& topic, TopicIncarnation incarnation) {
    absl::MutexLock lock(&mu_);
    table_[topic] = std::move(incarnation);
  }
  TopicIncarnation IncarnationOf(absl::string_view topic) const override {
    absl::MutexLock lock(&mu_);
    auto it = table_.find(std::string(topic));
    return it == table_.end() ? TopicIncarnation::Unknown() : it->second;
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, TopicIncarnation> table_ ABSL_GUARDED_BY(mu_);
};

std::string ErrLine(const absl::Status& status, absl::string_view prefix = "") {
  std::string message(status.message());
  for (char& c : message) {
    if (c == '\n') c = ' ';
  }
  return absl::StrCat(
      "err ",
      StorageErrorCodeName(GetStorageErrorCode(EnsureStorageError(status))),
      " ", prefix, message);
}

std::string Value(absl::string_view tag, int64_t i, int64_t bytes) {
  std::string value = absl::StrCat(tag, "-", i);
  if (static_cast<int64_t>(value.size()) < bytes) value.resize(bytes, 'x');
  return value;
}

std::string RecordBatch(absl::string_view value) {
  BatchBuilder builder;
  builder.AddRecord(absl::nullopt, value);
  return builder.Build();
}

class Driver {
 public:
  Driver(std::unique_ptr<DiskEngine> engine,
         std::shared_ptr<IncarnationTable> incarnations)
      : engine_(std::move(engine)), incarnations_(std::move(incarnations)) {}

  // The answer line to one command line; sets *quit for `quit`.
  std::string Run(const std::vector<std::string>& args, bool* quit);

 private:
  absl::StatusOr<TopicPartition> Tp(const std::vector<std::string>& args) {
    int32_t partition = 0;
    if (args.size() < 3 || !absl::SimpleAtoi(args[2], &partition)) {
      return StorageError(StorageErrorCode::kInvalidRequest,
                          "expected a topic and a partition");
    }
    return TopicPartition{args[1], partition};
  }

  std::string Append(const TopicPartition& tp, int64_t epoch,
                     absl::string_view tag, int64_t count, int64_t bytes);
  std::string Stream(const TopicPartition& tp, int64_t epoch,
                     absl::string_view tag);
  std::string Read(const TopicPartition& tp);
  std::string Retention(const TopicPartition& tp, int64_t retention_bytes);
  std::string Fenced(const TopicPartition& tp, int64_t epoch,
                     int64_t first_producer, int64_t count, int64_t fence);
  static std::string OpenDescriptorsUnder(absl::string_view prefix);

  std::unique_ptr<DiskEngine> engine_;
  std::shared_ptr<IncarnationTable> incarnations_;
};

std::string Driver::Append(const TopicPartition& tp, int64_t epoch,
                           absl::string_view tag, int64_t count,
                           int64_t bytes) {
  int64_t first = -1;
  int64_t last = -1;
  for (int64_t i = 0; i < count; ++i) {
    absl::StatusOr<AppendResult> result = engine_->AppendAndWait(
        tp, epoch, Acks::kAll, RecordBatch(Value(tag, i, bytes)));
    if (!result.ok()) {
      return ErrLine(result.status(), absl::StrCat("acked=", i, " "));
    }
    if (first < 0) first = result->base_offset;
    last = result->last_offset;
  }
  return absl::StrCat("ok ", first, " ", last);
}

std::string Driver::Stream(const TopicPartition& tp, int64_t epoch,
                           absl::string_view tag) {
  for (int64_t i = 0;; ++i) {
    std::string value = Value(tag, i, 0);
    absl::StatusOr<AppendResult> result =
        engine_->AppendAndWait(tp, epoch, Acks::kAll, RecordBatch(value));
    if (!result.ok()) return ErrLine(result.status());
    std::cout << "acked " << result->base_offset << " " << value << std::endl;
  }
}

std::string Driver::Read(const TopicPartition& tp) {
  absl::StatusOr<int64_t> start = engine_->LogStartOffset(tp);
  if (!start.ok()) return ErrLine(start.status());
  absl::StatusOr<int64_t> high_watermark = engine_->HighWatermark(tp);
  if (!high_watermark.ok()) return ErrLine(high_watermark.status());
  std::vector<std::string> records;
  int64_t offset = *start;
  while (offset < *high_watermark) {
    absl::StatusOr<ReadResult> read =
        engine_->Read(tp, offset, 1 << 20, Isolation::kReadUncommitted);
    if (!read.ok()) return ErrLine(read.status());
    if (read->batches == 0) break;
    absl::StatusOr<std::vector<StoredRecord>> decoded =
        StoredRecordsOf(std::string(read->records));
    if (!decoded.ok()) return ErrLine(decoded.status());
    for (const StoredRecord& record : *decoded) {
      if (record.offset >= *high_watermark) break;
      std::string value = record.value.value_or("<null>");
      if (value.size() > 40) value = absl::StrCat("len=", value.size());
      records.push_back(absl::StrCat(record.offset, ":", value));
    }
    offset = read->next_offset;
  }
  return absl::StrCat("ok ", *start, " ", *high_watermark, " ", records.size(),
                      records.empty() ? "" : " ", absl::StrJoin(records, " "));
}

std::string Driver::Retention(const TopicPartition& tp,
                              int64_t retention_bytes) {
  TopicConfigOverrides overrides;
  overrides.retention_bytes = retention_bytes;
  absl::Status status = engine_->SetTopicConfig(tp.topic, overrides);
  if (!status.ok()) return ErrLine(status);
  cleaner::RetentionCleaner cleaner(engine_.get(),
                                    cleaner::RetentionCleaner::Options{});
  cleaner.RunOnce();
  absl::StatusOr<int64_t> start = engine_->LogStartOffset(tp);
  if (!start.ok()) return ErrLine(start.status());
  return absl::StrCat("ok ", *start);
}

std::string Driver::Fenced(const TopicPartition& tp, int64_t epoch,
                           int64_t first_producer, int64_t count,
                           int64_t fence) {
  int refused = 0;
  for (int64_t producer = first_producer; producer < first_producer + count;
       ++producer) {
    BatchBuilder builder;
    builder.Producer(producer, static_cast<int16_t>(fence - 1), 0)
        .AddRecord(absl::nullopt, "fenced?");
    absl::StatusOr<AppendResult> result =
        engine_->AppendAndWait(tp, epoch, Acks::kAll, builder.Build());
    if (!result.ok()) ++refused;
  }
  return absl::StrCat("ok ", refused);
}

std::string Driver::OpenDescriptorsUnder(absl::string_view prefix) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) {
    return ErrLine(absl::InternalError("cannot list /proc/self/fd"));
  }
  int count = 0;
  while (dirent* entry = ::readdir(dir)) {
    char target[PATH_MAX];
    std::string link = absl::StrCat("/proc/self/fd/", entry->d_name);
    ssize_t n = ::readlink(link.c_str(), target, sizeof(target) - 1);
    if (n <= 0) continue;
    if (absl::string_view(target, n).substr(0, prefix.size()) == prefix) {
      ++count;
    }
  }
  ::closedir(dir);
  return absl::StrCat("ok ", count);
}

std::string Driver::Run(const std::vector<std::string>& args, bool* quit) {
  auto number = [&](size_t i, int64_t* out) {
    return i < args.size() && absl::SimpleAtoi(args[i], out);
  };
  const std::string& command = args[0];
  if (command == "quit") {
    *quit = true;
    absl::Status status = engine_->Drain();
    return status.ok() ? "ok" : ErrLine(status);
  }
  if (command == "fds" && args.size() == 2) {
    return OpenDescriptorsUnder(args[1]);
  }
  if (command == "fence") {
    int64_t first, count, epoch;
    if (number(1, &first) && number(2, &count) && number(3, &epoch)) {
      for (int64_t p = first; p < first + count; ++p) {
        absl::Status status =
            engine_->FenceProducerEpoch(p, static_cast<int16_t>(epoch));
        if (!status.ok()) return ErrLine(status);
      }
      return "ok";
    }
  }
  if (command == "abandon" && args.size() == 2) {
    return absl::StrCat("ok ", engine_->AbandonTopic(args[1]));
  }
  if (command == "incarnation" && args.size() == 3) {
    TopicIncarnation incarnation = TopicIncarnation::Known(args[2]);
    if (args[2] == "unknown") incarnation = TopicIncarnation::Unknown();
    if (args[2] == "pending") incarnation = TopicIncarnation::Pending();
    incarnations_->Set(args[1], std::move(incarnation));
    return "ok";
  }
  if (command == "stamp" && args.size() == 3) {
    absl::StatusOr<std::string> partition_dir =
        engine_->PartitionDir({args[1], 0});
    if (!partition_dir.ok()) return ErrLine(partition_dir.status());
    std::string topic_dir = partition_dir->substr(0, partition_dir->rfind('/'));
    absl::Status status =
        WriteTopicIdStamp(*fs::PosixFileSystem::Default(), topic_dir, args[2]);
    return status.ok() ? "ok" : ErrLine(status);
  }

  absl::StatusOr<TopicPartition> tp = Tp(args);
  if (!tp.ok()) return ErrLine(tp.status());
  int64_t a = 0, b = 0, c = 0, d = 0;
  if (command == "takeover" && number(3, &a)) {
    absl::StatusOr<int64_t> end = engine_->TakeOver(*tp, a);
    return end.ok() ? absl::StrCat("ok ", *end) : ErrLine(end.status());
  }
  if (command == "relinquish") {
    absl::Status status = engine_->Relinquish(*tp);
    return status.ok() ? "ok" : ErrLine(status);
  }
  if (command == "delete_partition") {
    absl::Status status = engine_->DeletePartition(*tp);
    return status.ok() ? "ok" : ErrLine(status);
  }
  if (command == "append" && number(3, &a) && number(5, &b) &&
      (args.size() == 6 || number(6, &c))) {
    return Append(*tp, a, args[4], b, c);
  }
  if (command == "stream" && number(3, &a) && args.size() == 5) {
    return Stream(*tp, a, args[4]);
  }
  if (command == "read") return Read(*tp);
  if (command == "delete_records" && number(3, &a)) {
    absl::StatusOr<int64_t> start = engine_->DeleteRecords(*tp, a);
    return start.ok() ? absl::StrCat("ok ", *start) : ErrLine(start.status());
  }
  if (command == "retention" && number(3, &a)) return Retention(*tp, a);
  if (command == "fenced" && number(3, &a) && number(4, &b) && number(5, &c) &&
      number(6, &d)) {
    return Fenced(*tp, a, b, c, d);
  }
  return ErrLine(StorageError(StorageErrorCode::kInvalidRequest,
                              absl::StrCat("unknown command or arguments: ",
                                           absl::StrJoin(args, " "))));
}

int Main() {
  auto incarnations = std::make_shared<IncarnationTable>();
  DiskEngine::Options options;
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.default_config.segment_bytes =
      static_cast<uint64_t>(absl::GetFlag(FLAGS_segment_bytes));
  options.io_threads = 2;
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      DiskEngine::Create(std::move(options));
  if (!engine.ok()) {
    std::cout << ErrLine(engine.status()) << std::endl;
    return 1;
  }
  (*engine)->SetIdentityResolver(incarnations);
  std::cout << "ready" << std::endl;
  Driver driver(std::move(*engine), incarnations);
  std::string line;
  bool quit = false;
  while (!quit && std::getline(std::cin, line)) {
    std::vector<std::string> args =
        absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (args.empty()) continue;
    std::cout << driver.Run(args, &quit) << std::endl;
  }
  return 0;
}

}  // namespace
}  // namespace kaas::test

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return kaas::test::Main();
}
