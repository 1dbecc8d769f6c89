#include "cleaner/retention_cleaner.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "base/storage_error.h"
#include "cleaner/retention_policy.h"
#include "glog/logging.h"

namespace kaas::cleaner {

std::string SweepReport::ToString() const {
  return absl::StrFormat(
      "examined %d partitions, advanced %d; deleted by time %d segments "
      "(%d bytes), by size %d segments (%d bytes); %d rolls, %d deferred, "
      "%d errors",
      partitions_examined, partitions_advanced, by_time.segments, by_time.bytes,
      by_size.segments, by_size.bytes, rolls, deferred, errors);
}

RetentionCleaner::RetentionCleaner(RetentionHost* host, Options options)
    : host_(host),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()) {
  CHECK(host_ != nullptr);
  CHECK(options_.check_interval >= absl::ZeroDuration())
      << options_.name << ": negative check interval";
}

RetentionCleaner::~RetentionCleaner() { Stop(); }

void RetentionCleaner::Start() {
  absl::MutexLock lock(&lifecycle_mu_);
  CHECK(!started_) << options_.name << ": Start() called twice";
  started_ = true;
  if (options_.check_interval == absl::ZeroDuration()) {
    LOG(INFO) << options_.name << ": periodic retention sweep disabled";
    return;
  }
  thread_ = std::thread([this] { Loop(); });
}

void RetentionCleaner::Stop() {
  absl::MutexLock lock(&lifecycle_mu_);
  if (!stop_.HasBeenNotified()) stop_.Notify();
  if (thread_.joinable()) thread_.join();
}

void RetentionCleaner::Loop() {
  // The first wait is a whole interval: no sweep while taking over.
  while (!stop_.WaitForNotificationWithTimeout(options_.check_interval)) {
    Sweep(/*periodic=*/true);
  }
}

SweepReport RetentionCleaner::RunOnce() { return Sweep(/*periodic=*/false); }

SweepReport RetentionCleaner::Sweep(bool periodic) {
  absl::MutexLock lock(&sweep_mu_);
  SweepReport report;
  for (const TopicPartition& tp : host_->LedPartitions()) {
    if (periodic && stop_.HasBeenNotified()) break;
    SweepPartition(tp, report);
  }
  LOG(INFO) << options_.name << ": retention sweep: " << report.ToString();
  if (options_.on_sweep) options_.on_sweep(report);
  return report;
}

bool RetentionCleaner::Check(const absl::Status& status,
                             const TopicPartition& tp, absl::string_view step,
                             SweepReport& report) {
  if (status.ok()) return true;
  StorageErrorCode code = GetStorageErrorCode(status);
  if (code == StorageErrorCode::kNotLeader ||
      code == StorageErrorCode::kMigrating) {
    VLOG(1) << options_.name << ": " << tp.ToString() << ": skipped (" << step
            << "): " << status;
    return false;
  }
  ++report.errors;
  LOG(WARNING) << options_.name << ": " << tp.ToString() << ": " << step
               << " failed; skipping it this sweep: " << status;
  return false;
}

void RetentionCleaner::SweepPartition(const TopicPartition& tp,
                                      SweepReport& report) {
  if (!Check(host_->ReloadTopicConfig(tp), tp, "reloading the topic config",
             report)) {
    return;
  }
  absl::StatusOr<RetentionView> view = host_->DescribeForRetention(tp);
  if (!Check(view.status(), tp, "describing the segments", report)) return;
  ++report.partitions_examined;
  if (!RetentionApplies(view->config)) return;

  absl::StatusOr<bool> rolled = host_->RollIfAged(tp);
  if (!Check(rolled.status(), tp, "rolling by segment.ms", report)) return;
  if (*rolled) {
    ++report.rolls;
    view = host_->DescribeForRetention(tp);
    if (!Check(view.status(), tp, "describing the segments", report)) return;
  }

  std::optional<RetentionDecision> decision =
      DecideRetention(*view, clock_->Now());
  if (decision.has_value() && decision->held_back) ++report.deferred;
  if (!decision.has_value()) {
    // Everything due may be held back by the high watermark.
    std::optional<RetentionDecision> wanted =
        DecideRetention(RetentionView{view->config, view->segments,
                                      view->log_start_offset, INT64_MAX},
                        clock_->Now());
    if (wanted.has_value()) ++report.deferred;
    return;
  }
  absl::StatusOr<LogStartAdvance> advance = host_->AdvanceLogStartForRetention(
      tp, decision->target, decision->reason);
  if (!Check(advance.status(), tp, "advancing the log start", report)) return;
  if (advance->log_start_offset <= view->log_start_offset) return;

  ++report.partitions_advanced;
  SweepReport::Reclaimed& reclaimed = decision->reason == RetentionReason::kTime
                                          ? report.by_time
                                          : report.by_size;
  reclaimed.segments += advance->segments_deleted;
  reclaimed.bytes += advance->bytes_deleted;
  LOG(INFO) << options_.name << ": " << tp.ToString() << ": log start "
            << view->log_start_offset << " -> " << advance->log_start_offset
            << " by " << RetentionReasonName(decision->reason) << ": deleted "
            << advance->segments_deleted << " segments, "
            << advance->bytes_deleted << " bytes";
}

}  // namespace kaas::cleaner
