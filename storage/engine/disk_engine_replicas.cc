// DiskEngine::DescribeReplica: a partition's replica described from its
// directory without taking it over (list, stat, read two metadata files).

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/storage_error.h"
#include "storage/engine/disk_engine.h"
#include "storage/engine/request_validation.h"

namespace kaas {

using partition::Partition;

absl::StatusOr<ReplicaDescription> DiskEngine::DescribeReplica(
    const TopicPartition& tp) {
  KAAS_RETURN_IF_ERROR(ValidateTopicPartition(tp));
  KAAS_RETURN_IF_ERROR(CheckNotMigrating(tp));
  KAAS_ASSIGN_OR_RETURN(Resolved where, EnsureStorageError(Resolve(tp)));
  ReplicaDescription out;
  out.log_dir = where.log_dir->name;
  if (absl::StatusOr<std::shared_ptr<Partition>> led = Led(tp); led.ok()) {
    Partition& partition = **led;
    out.size_bytes = partition.SizeBytes();
    out.log_start_offset = partition.LogStartOffset();
    out.log_end_offset = partition.LogEndOffset();
    out.taken_over = true;
    return out;
  }
  KAAS_ASSIGN_OR_RETURN(bool has_data,
                        EnsureStorageError(HasPartitionData(where.dir)));
  if (!has_data) {
    return StorageError(StorageErrorCode::kUnknownTopicOrPartition,
                        absl::StrCat(tp.ToString(), " has no data here"));
  }
  KAAS_ASSIGN_OR_RETURN(
      ReplicaDescription on_disk,
      EnsureStorageError(Partition::DescribeUnopened(*fs_, where.dir)));
  on_disk.log_dir = out.log_dir;
  return on_disk;
}

}  // namespace kaas
