#include "cleaner/log_cleaner.h"

#include <algorithm>
#include <utility>

#include "base/storage_error.h"
#include "glog/logging.h"

namespace kaas::cleaner {

std::optional<size_t> ChooseFilthiest(
    const std::vector<CleaningCandidate>& candidates, int64_t now_ms) {
  std::optional<size_t> overdue;  // by max.compaction.lag.ms or a horizon
  std::optional<size_t> dirtiest;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const CompactionView& view = candidates[i].view;
    if (!view.compact) continue;
    const bool lagging =
        view.dirty_bytes > 0 && view.first_dirty_timestamp >= 0 &&
        now_ms - view.first_dirty_timestamp > view.max_compaction_lag_ms;
    if (lagging || view.delete_horizon_due) {
      const int64_t age = lagging ? view.first_dirty_timestamp : now_ms;
      if (!overdue || age < candidates[*overdue].view.first_dirty_timestamp) {
        overdue = i;
      }
      continue;
    }
    if (view.dirty_bytes == 0 ||
        view.dirty_ratio() < view.min_cleanable_dirty_ratio) {
      continue;
    }
    if (!dirtiest ||
        view.dirty_ratio() > candidates[*dirtiest].view.dirty_ratio()) {
      dirtiest = i;
    }
  }
  return overdue ? overdue : dirtiest;
}

LogCleaner::LogCleaner(CompactionHost* host, Options options)
    : host_(host),
      options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : Clock::Real()),
      throttle_(options_.io_max_bytes_per_second, clock_) {
  CHECK(host_ != nullptr);
  CHECK_GE(options_.threads, 1) << options_.name;
}

LogCleaner::~LogCleaner() { Stop(); }

void LogCleaner::Start() {
  absl::MutexLock lock(&lifecycle_mu_);
  CHECK(!started_) << options_.name << ": Start() called twice";
  started_ = true;
  for (int i = 0; i < options_.threads; ++i) {
    threads_.emplace_back([this] { Loop(); });
  }
}

void LogCleaner::Stop() {
  absl::MutexLock lock(&lifecycle_mu_);
  if (!stop_.HasBeenNotified()) stop_.Notify();
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

void LogCleaner::Loop() {
  // Each thread owns its share of the dedupe buffer.
  OffsetMap map(options_.dedupe_buffer_bytes /
                static_cast<size_t>(options_.threads));
  while (!stop_.HasBeenNotified()) {
    if (!Round(map).has_value()) {
      stop_.WaitForNotificationWithTimeout(options_.backoff);
    }
  }
}

std::optional<TopicPartition> LogCleaner::RunOnce() {
  OffsetMap map(options_.dedupe_buffer_bytes /
                static_cast<size_t>(options_.threads));
  return Round(map);
}

void LogCleaner::Throttle(uint64_t bytes) {
  const absl::Duration wait = throttle_.Acquire(bytes);
  if (wait > absl::ZeroDuration()) stop_.WaitForNotificationWithTimeout(wait);
}

std::optional<TopicPartition> LogCleaner::Round(OffsetMap& map) {
  const int64_t now_ms = absl::ToUnixMillis(clock_->Now());
  std::vector<CleaningCandidate> candidates;
  for (const TopicPartition& tp : host_->LedPartitions()) {
    if (stop_.HasBeenNotified()) return std::nullopt;
    absl::Status reloaded = host_->ReloadTopicConfig(tp);
    absl::StatusOr<CompactionView> view =
        reloaded.ok() ? host_->DescribeCompaction(tp, now_ms)
                      : absl::StatusOr<CompactionView>(reloaded);
    if (!view.ok()) {
      const StorageErrorCode code = GetStorageErrorCode(view.status());
      if (code != StorageErrorCode::kNotLeader &&
          code != StorageErrorCode::kMigrating) {
        LOG(WARNING) << options_.name << ": " << tp.ToString()
                     << ": skipped this round: " << view.status();
      }
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (in_progress_.count(tp) > 0) continue;
    auto state = states_.find(tp);
    if (state != states_.end() && !state->second.uncleanable.ok()) {
      if (state->second.uncleanable_config == view->config_fingerprint) {
        continue;
      }
      // The config changed: try again.
      state->second.uncleanable = absl::OkStatus();
    }
    candidates.push_back({tp, *std::move(view)});
  }
  std::optional<size_t> chosen = ChooseFilthiest(candidates, now_ms);
  if (!chosen.has_value()) return std::nullopt;
  const CleaningCandidate& candidate = candidates[*chosen];
  {
    absl::MutexLock lock(&mu_);
    // Another thread may have chosen it meanwhile.
    if (!in_progress_.insert(candidate.tp).second) return std::nullopt;
  }
  CompactionRequest request;
  request.now_ms = now_ms;
  request.map = &map;
  request.throttle = [this](uint64_t bytes) { Throttle(bytes); };
  request.stop = [this] { return stop_.HasBeenNotified(); };
  absl::StatusOr<CompactionReport> report =
      host_->Compact(candidate.tp, request);
  absl::MutexLock lock(&mu_);
  in_progress_.erase(candidate.tp);
  PartitionCleaning& state = states_[candidate.tp];
  if (report.ok()) {
    ++state.passes;
    state.last = *report;
    LOG(INFO) << options_.name << ": " << candidate.tp.ToString()
              << ": compacted " << report->segments_replaced
              << " segments into " << report->segments_written << " ("
              << report->bytes_before << " -> " << report->bytes_after
              << " bytes, " << report->records_removed
              << " records removed); keys read up to offset "
              << report->map_end;
    return candidate.tp;
  }
  const StorageErrorCode code = GetStorageErrorCode(report.status());
  if (code == StorageErrorCode::kNotLeader ||
      code == StorageErrorCode::kMigrating) {
    return candidate.tp;
  }
  LOG(ERROR) << options_.name << ": " << candidate.tp.ToString()
             << ": compaction failed; the partition is not cleaned again "
                "until its config changes or the process restarts: "
             << report.status();
  state.uncleanable = report.status();
  state.uncleanable_config = candidate.view.config_fingerprint;
  return candidate.tp;
}

std::map<TopicPartition, PartitionCleaning> LogCleaner::States() const {
  absl::MutexLock lock(&mu_);
  return states_;
}

}  // namespace kaas::cleaner
