// File: testing/torture/torture_run.cc

#include "testing/torture/torture_run.h"

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "fs/posix_file_system.h"
#include "storage/engine/disk_engine.h"
#include "testing/fault_injecting_file_system.h"
#include "testing/torture/torture_check.h"
#include "testing/torture/torture_workload.h"
#include "tools/child_process.h"

namespace kaas::torture {
namespace {

// A child stops by itself after this many units per writer (it is normally
// killed long before).
constexpr int64_t kChildMaxUnits = 100000;
constexpr absl::Duration kChildLineTimeout = absl::Seconds(120);

// `direct_io`: active segments written with direct I/O (where `fs` grants
// it) or through the page cache; rounds pick one at random, so both write
// paths, and recoveries from one to the other, face every crash.
absl::StatusOr<std::unique_ptr<DiskEngine>> OpenEngine(
    const std::string& data_dir, fs::FileSystem* fs, bool direct_io) {
  DiskEngine::Options options;
  options.data_dir = data_dir;
  options.fs = fs;
  options.direct_io = direct_io;
  options.io_threads = 2;
  // Small segments and frequent checkpoints, so that rounds roll segments
  // and recover from checkpoints and snapshots, not only from a scan.
  options.default_config.segment_bytes = 64 << 10;
  options.default_config.index_interval_bytes = 1024;
  options.default_config.checkpoint_interval_bytes = 32 << 10;
  // The units carry fixed timestamps from the past: nothing may expire them.
  options.default_config.retention_ms = std::nullopt;
  options.default_config.producer_id_expiration_ms =
      int64_t{100} * 365 * 86400000;
  return DiskEngine::Create(std::move(options));
}

absl::Status LeadAll(StorageEngine& engine, int partitions, int64_t epoch) {
  for (int p = 0; p < partitions; ++p) {
    KAAS_RETURN_IF_ERROR(
        engine.TakeOver({std::string(kTortureTopic), p}, epoch).status());
  }
  return absl::OkStatus();
}

// Sends the writer's units from `first` on with acks=all until `stop` is
// set, `last` units are sent, or an append fails (returned). Calls
// on_ack(unit, offset) for each acknowledgement.
absl::Status RunWriter(StorageEngine& engine, const Writer& writer,
                       int64_t epoch, int64_t first, int64_t last,
                       const std::atomic<bool>& stop,
                       absl::FunctionRef<bool(int64_t, int64_t)> on_ack) {
  for (int64_t n = first; n < last && !stop.load(); ++n) {
    KAAS_ASSIGN_OR_RETURN(AppendResult result,
                          engine.AppendAndWait(writer.tp(), epoch, Acks::kAll,
                                               UnitBytes(writer, n)));
    if (!on_ack(n, result.base_offset)) break;
  }
  return absl::OkStatus();
}

// Settles every unit in doubt after a recovery (see torture_run.h) and
// records the outcome in the ledgers.
// Returns how many units were sent again.
absl::StatusOr<int> SettleInDoubt(StorageEngine& engine,
                                  const std::vector<Writer>& writers,
                                  const LogContents& contents, int64_t epoch,
                                  std::vector<WriterLedger>* ledgers) {
  int resent = 0;
  for (const Writer& writer : writers) {
    WriterLedger& ledger = (*ledgers)[writer.index];
    if (!ledger.in_doubt) continue;
    const int64_t n = static_cast<int64_t>(ledger.acked.size());
    const std::vector<int64_t>& stored = contents.writers[writer.index].offsets;
    const bool kept = static_cast<int64_t>(stored.size()) > n;
    const bool retry_is_idempotent =
        writer.kind != WriterKind::kPlain && !UnitOf(writer, n).marker;
    if (kept && !retry_is_idempotent) {
      ledger.acked.push_back(stored[n]);
    } else {
      absl::StatusOr<AppendResult> result = engine.AppendAndWait(
          writer.tp(), epoch, Acks::kAll, UnitBytes(writer, n));
      if (!result.ok()) {
        return absl::DataLossError(absl::StrCat(
            "writer ", writer.index, " (", WriterKindName(writer.kind),
            ") unit ", n,
            ": its retry after recovery failed: ", result.status().ToString(),
            kept ? " (the log kept it: the retry is a duplicate)" : ""));
      }
      if (kept && (!result->duplicate || result->base_offset != stored[n])) {
        return absl::DataLossError(absl::StrCat(
            "writer ", writer.index, " (", WriterKindName(writer.kind),
            ") unit ", n, ": stored at ", stored[n],
            " before the crash, yet its retry was ",
            result->duplicate ? "answered with offset " : "stored again at ",
            result->base_offset, " (idempotence state lost)"));
      }
      ledger.acked.push_back(result->base_offset);
      ++resent;
    }
    ledger.in_doubt = false;
  }
  return resent;
}

// What one recovery found.
struct Recovered {
  int64_t acknowledged = 0;  // units acknowledged before the crash
  LogContents contents;
  int resent = 0;  // units in doubt sent again
  absl::Duration elapsed;
};

int64_t AckedUnits(const std::vector<WriterLedger>& ledgers) {
  int64_t total = 0;
  for (const WriterLedger& ledger : ledgers) total += ledger.acked.size();
  return total;
}

// Leads the partitions at `epoch` (recovering them), checks the log against
// the ledgers and settles the units in doubt.
absl::StatusOr<Recovered> RecoverAndCheck(StorageEngine& engine,
                                          const std::vector<Writer>& writers,
                                          int partitions, int64_t epoch,
                                          std::vector<WriterLedger>* ledgers) {
  Recovered recovered;
  const absl::Time start = absl::Now();
  recovered.acknowledged = AckedUnits(*ledgers);
  KAAS_RETURN_IF_ERROR(LeadAll(engine, partitions, epoch));
  KAAS_ASSIGN_OR_RETURN(
      recovered.contents,
      CheckRecoveredLog(engine, writers, *ledgers, partitions));
  KAAS_ASSIGN_OR_RETURN(
      recovered.resent,
      SettleInDoubt(engine, writers, recovered.contents, epoch, ledgers));
  recovered.elapsed = absl::Now() - start;
  return recovered;
}

std::string Describe(const Recovered& recovered) {
  return absl::StrFormat(
      "all %d acknowledged units at their offsets byte for byte (%d batches "
      "in the log, %d units in doubt kept, %d sent again), producer and "
      "transaction state consistent; %d ms",
      recovered.acknowledged, recovered.contents.batches,
      recovered.contents.in_doubt_kept, recovered.resent,
      absl::ToInt64Milliseconds(recovered.elapsed));
}

// Prefixes a failed round's status with the round's name.
absl::Status InRound(const std::string& round, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(round, ": ", status.message()));
}

test::CrashOptions RandomCrash(std::mt19937_64& random) {
  test::CrashOptions crash;
  crash.tail = static_cast<test::UnsyncedTail>(random() % 3);
  crash.content = static_cast<test::TailContent>(random() % 3);
  return crash;
}

std::string Describe(const test::CrashOptions& crash) {
  static const char* const kTails[] = {"dropped", "random prefix kept",
                                       "all kept"};
  static const char* const kContents[] = {"as written", "as zeros",
                                          "as garbage"};
  if (crash.tail == test::UnsyncedTail::kDrop) return "unsynced tails dropped";
  return absl::StrCat("unsynced tails: ", kTails[static_cast<int>(crash.tail)],
                      " ", kContents[static_cast<int>(crash.content)]);
}

// ---- Power-loss rounds -----------------------------------------------------

// One round's writers, racing a simulated power loss.
class PowerLossRound {
 public:
  PowerLossRound(StorageEngine& engine, const std::vector<Writer>& writers,
                 int64_t epoch, std::vector<WriterLedger>* ledgers)
      : engine_(engine),
        writers_(writers),
        epoch_(epoch),
        ledgers_(*ledgers),
        failed_after_crash_(writers.size(), false) {}

  // Runs the writers; once `acks` acknowledgements arrived, crashes `fs`.
  absl::Status Run(int64_t acks, test::FaultInjectingFileSystem& fs,
                   const test::CrashOptions& crash) {
    std::vector<std::thread> threads;
    std::vector<absl::Status> results(writers_.size());
    for (const Writer& writer : writers_) {
      threads.emplace_back(
          [&, writer] { results[writer.index] = RunOne(writer); });
    }
    {
      absl::MutexLock lock(&mu_);
      auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return acks_ >= acks || finished_ == static_cast<int>(writers_.size());
      };
      mu_.Await(absl::Condition(&ready));
      crashed_ = true;
    }
    // Failures from here on are the crash's doing.
    stop_ = true;
    fs.Crash(crash);
    for (std::thread& thread : threads) thread.join();
    absl::MutexLock lock(&mu_);
    for (const Writer& writer : writers_) {
      const absl::Status& status = results[writer.index];
      if (!status.ok() && !failed_after_crash_[writer.index]) {
        return absl::InternalError(
            absl::StrCat("writer ", writer.index,
                         " failed before the crash: ", status.ToString()));
      }
    }
    return absl::OkStatus();
  }

 private:
  absl::Status RunOne(const Writer& writer) {
    WriterLedger& ledger = ledgers_[writer.index];
    // Only this thread touches its writer's ledger until the round ends.
    absl::Status status = RunWriter(
        engine_, writer, epoch_, static_cast<int64_t>(ledger.acked.size()),
        kChildMaxUnits, stop_, [&](int64_t n, int64_t offset) {
          ledger.acked.push_back(offset);
          absl::MutexLock lock(&mu_);
          ++acks_;
          return true;
        });
    absl::MutexLock lock(&mu_);
    ++finished_;
    if (!status.ok()) {
      // The unit that failed may have reached the log before the crash.
      ledger.in_doubt = true;
      failed_after_crash_[writer.index] = crashed_;
    }
    return status;
  }

  StorageEngine& engine_;
  const std::vector<Writer>& writers_;
  const int64_t epoch_;
  std::vector<WriterLedger>& ledgers_;
  std::atomic<bool> stop_{false};
  absl::Mutex mu_;
  int64_t acks_ ABSL_GUARDED_BY(mu_) = 0;
  int finished_ ABSL_GUARDED_BY(mu_) = 0;
  bool crashed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<bool> failed_after_crash_ ABSL_GUARDED_BY(mu_);
};

// The writes recovery may make (truncating a torn tail, rewriting indexes,
// the new epoch's segment and manifest).
constexpr test::FsOp kRecoveryWriteOps[] = {
    test::FsOp::kOpenForWrite, test::FsOp::kWrite,  test::FsOp::kTruncate,
    test::FsOp::kDataSync,     test::FsOp::kRename, test::FsOp::kSyncDir,
    test::FsOp::kUnlink,
};

// Makes one of recovery's writes fail (EIO) during the take-over; returns
// whether the take-over failed, i.e. recovery stopped part way.
bool InterruptRecovery(StorageEngine& engine,
                       test::FaultInjectingFileSystem& fs, int partitions,
                       int64_t epoch, std::mt19937_64& random,
                       std::string* what) {
  test::Fault fault(kRecoveryWriteOps[random() % std::size(kRecoveryWriteOps)],
                    EIO);
  fault.skip = static_cast<int>(random() % 4);
  fault.count = test::Fault::kForever;
  fs.InjectFault(fault);
  const absl::Status status = LeadAll(engine, partitions, epoch);
  fs.ClearFaults();
  *what = absl::StrCat("EIO on ", test::FsOpName(fault.op), " calls #",
                       fault.skip + 1, " and later");
  return !status.ok();
}

absl::Status RunPowerLossRounds(const TortureOptions& options,
                                const std::vector<Writer>& writers,
                                std::mt19937_64& random, std::ostream& out) {
  const std::string data_dir = options.dir + "/power-loss";
  fs::PosixFileSystem posix;
  test::FaultInjectingFileSystem fs(&posix, random());
  std::vector<WriterLedger> ledgers(writers.size());
  int64_t epoch = 1;
  fs.GrantDirectIo(true);
  for (int round = 0; round <= options.power_loss_rounds; ++round, ++epoch) {
    const bool direct_io = random() % 2 == 0;
    const std::string name =
        absl::StrCat("power-loss round ", round,
                     direct_io ? " (direct I/O)" : " (buffered)");
    KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                          OpenEngine(data_dir, &fs, direct_io));
    // Now and then the power fails again while recovery is under way.
    std::string what;
    if (round > 0 && random() % 3 == 0 &&
        InterruptRecovery(*engine, fs, options.partitions, epoch, random,
                          &what)) {
      const test::CrashOptions crash = RandomCrash(random);
      out << absl::StrFormat(
          "%s: recovery stopped by %s, then power loss, %s\n", name, what,
          Describe(crash));
      engine.reset();
      fs.Crash(crash);
      ++epoch;
      KAAS_ASSIGN_OR_RETURN(engine, OpenEngine(data_dir, &fs, direct_io));
    }
    absl::StatusOr<Recovered> recovered =
        RecoverAndCheck(*engine, writers, options.partitions, epoch, &ledgers);
    KAAS_RETURN_IF_ERROR(InRound(name, recovered.status()));
    if (round > 0) out << name << ": " << Describe(*recovered) << "\n";
    if (round == options.power_loss_rounds) break;
    const int64_t acks = 1 + random() % options.max_acks_per_round;
    const test::CrashOptions crash = RandomCrash(random);
    out << absl::StrFormat("%s: power loss after %d acknowledgements, %s\n",
                           name, acks, Describe(crash));
    PowerLossRound writers_round(*engine, writers, epoch, &ledgers);
    KAAS_RETURN_IF_ERROR(InRound(name, writers_round.Run(acks, fs, crash)));
    engine.reset();  // Gives up on the dead handles.
  }
  return absl::OkStatus();
}

// ---- Kill rounds
// -------------------------------------------------------------

// Parses "acked <writer> <unit> <offset>".
std::optional<std::array<int64_t, 3>> ParseAck(absl::string_view line) {
  std::vector<absl::string_view> parts = absl::StrSplit(line, ' ');
  std::array<int64_t, 3> values;
  if (parts.size() != 4 || parts[0] != "acked") return std::nullopt;
  for (int i = 0; i < 3; ++i) {
    if (!absl::SimpleAtoi(parts[i + 1], &values[i])) return std::nullopt;
  }
  return values;
}

absl::Status RecordAck(absl::string_view line,
                       const std::vector<Writer>& writers,
                       std::vector<WriterLedger>* ledgers) {
  std::optional<std::array<int64_t, 3>> ack = ParseAck(line);
  if (!ack.has_value() || (*ack)[0] < 0 ||
      (*ack)[0] >= static_cast<int64_t>(writers.size())) {
    return absl::InternalError(absl::StrCat("child said: ", line));
  }
  WriterLedger& ledger = (*ledgers)[(*ack)[0]];
  if ((*ack)[1] != static_cast<int64_t>(ledger.acked.size())) {
    return absl::InternalError(
        absl::StrCat("child acknowledged out of order: ", line));
  }
  ledger.acked.push_back((*ack)[2]);
  return absl::OkStatus();
}

// Runs one child until `acks` acknowledgements arrived, kills it, and
// collects every acknowledgement it printed before dying.
absl::Status KillChild(const TortureOptions& options,
                       const std::vector<Writer>& writers,
                       const std::string& data_dir, int64_t epoch, int64_t acks,
                       bool direct_io, std::vector<WriterLedger>* ledgers) {
  std::vector<std::string> resume;
  for (const WriterLedger& ledger : *ledgers) {
    resume.push_back(absl::StrCat(ledger.acked.size()));
  }
  KAAS_ASSIGN_OR_RETURN(
      tools::ChildProcess child,
      tools::ChildProcess::Spawn(
          {options.self, "--torture_child", "--dir=" + data_dir,
           absl::StrCat("--writers=", options.writers),
           absl::StrCat("--partitions=", options.partitions),
           absl::StrCat("--epoch=", epoch),
           absl::StrCat("--direct_io=", direct_io ? "true" : "false"),
           "--resume=" + absl::StrJoin(resume, ",")}));
  for (WriterLedger& ledger : *ledgers) ledger.in_doubt = true;
  int64_t seen = 0;
  bool killed = false;
  while (true) {
    KAAS_ASSIGN_OR_RETURN(std::optional<std::string> line,
                          child.ReadLine(kChildLineTimeout));
    if (!line.has_value()) break;  // it died: every line it wrote is read
    KAAS_RETURN_IF_ERROR(RecordAck(*line, writers, ledgers));
    if (++seen >= acks && !killed) {
      child.Kill();
      killed = true;
    }
  }
  KAAS_ASSIGN_OR_RETURN(int wait_status, child.Wait());
  if (!killed) {
    return absl::InternalError(
        absl::StrCat("the child ended before it was killed: ",
                     tools::DescribeWaitStatus(wait_status)));
  }
  return absl::OkStatus();
}

absl::Status RunKillRounds(const TortureOptions& options,
                           const std::vector<Writer>& writers,
                           std::mt19937_64& random, std::ostream& out) {
  const std::string data_dir = options.dir + "/kill";
  std::vector<WriterLedger> ledgers(writers.size());
  int64_t epoch = 1;
  for (int round = 0; round <= options.kill_rounds; ++round) {
    const std::string name = absl::StrCat("kill round ", round);
    {
      KAAS_ASSIGN_OR_RETURN(std::unique_ptr<DiskEngine> engine,
                            OpenEngine(data_dir, fs::PosixFileSystem::Default(),
                                       /*direct_io=*/random() % 2 == 0));
      absl::StatusOr<Recovered> recovered = RecoverAndCheck(
          *engine, writers, options.partitions, epoch, &ledgers);
      KAAS_RETURN_IF_ERROR(InRound(name, recovered.status()));
      if (round > 0) out << name << ": " << Describe(*recovered) << "\n";
      // The engine gives the partitions up cleanly here, as a broker
      // handing them to the next process would.
    }
    if (round == options.kill_rounds) break;
    ++epoch;
    const int64_t acks = 1 + random() % options.max_acks_per_round;
    const bool direct_io = random() % 2 == 0;
    out << absl::StrFormat("%s: SIGKILL after %d acknowledgements (%s)\n", name,
                           acks, direct_io ? "direct I/O" : "buffered");
    KAAS_RETURN_IF_ERROR(
        InRound(name, KillChild(options, writers, data_dir, epoch, acks,
                                direct_io, &ledgers)));
    ++epoch;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RunTorture(const TortureOptions& options, std::ostream& out) {
  if (options.writers < 1 || options.partitions < 1 ||
      options.max_acks_per_round < 1 || options.power_loss_rounds < 0 ||
      options.kill_rounds < 0) {
    return absl::InvalidArgumentError("invalid torture options");
  }
  const std::vector<Writer> writers =
      MakeWriters(options.writers, options.partitions);
  std::mt19937_64 random(options.seed);
  KAAS_RETURN_IF_ERROR(RunPowerLossRounds(options, writers, random, out));
  return RunKillRounds(options, writers, random, out);
}

int RunTortureChild(const std::string& data_dir, int writer_count,
                    int partitions, int64_t epoch, bool direct_io,
                    const std::vector<int64_t>& resume) {
  // Never outlive the run that watches us.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() == 1) return 1;
  const std::vector<Writer> writers = MakeWriters(writer_count, partitions);
  if (resume.size() != writers.size()) {
    std::cerr << "torture child: --resume needs one unit per writer\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<DiskEngine>> engine =
      OpenEngine(data_dir, fs::PosixFileSystem::Default(), direct_io);
  absl::Status status =
      engine.ok() ? LeadAll(**engine, partitions, epoch) : engine.status();
  if (!status.ok()) {
    std::cerr << "torture child: " << status << "\n";
    return 1;
  }
  tools::LineWriter lines;
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (const Writer& writer : writers) {
    threads.emplace_back([&, writer] {
      absl::Status result =
          RunWriter(**engine, writer, epoch, resume[writer.index],
                    kChildMaxUnits, stop, [&](int64_t n, int64_t offset) {
                      return lines.Write(absl::StrCat(
                          "acked ", writer.index, " ", n, " ", offset, "\n"));
                    });
      if (!result.ok()) {
        std::cerr << "torture child: writer " << writer.index << ": " << result
                  << "\n";
        stop = true;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  return stop ? 1 : 0;
}

}  // namespace kaas::torture
