#include "idempotence/classify.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace kaas {
namespace idempotence {
namespace {

Verdict Reject(VerdictKind kind, std::string reason) {
  Verdict verdict;
  verdict.kind = kind;
  verdict.reason = std::move(reason);
  return verdict;
}

Verdict Accept() {
  Verdict verdict;
  verdict.kind = VerdictKind::kAccept;
  return verdict;
}

Verdict OlderEpoch(const ProducerEntry& entry, const BatchInfo& batch,
                   absl::string_view what) {
  return Reject(VerdictKind::kInvalidProducerEpoch,
                absl::StrCat("invalid producer epoch for ", what,
                             " of producer ", batch.producer_id, ": received ",
                             batch.producer_epoch, ", current epoch is ",
                             entry.epoch, " (the producer was fenced)"));
}

Verdict OutOfOrder(const BatchInfo& batch, int32_t expected,
                   absl::string_view why) {
  return Reject(
      VerdictKind::kOutOfOrderSequence,
      absl::StrCat("out of order sequence for producer ", batch.producer_id,
                   " at epoch ", batch.producer_epoch, ": expected ", expected,
                   ", received ", batch.base_sequence, why));
}

}  // namespace

absl::string_view VerdictKindName(VerdictKind kind) {
  switch (kind) {
    case VerdictKind::kNotIdempotent:
      return "kNotIdempotent";
    case VerdictKind::kAccept:
      return "kAccept";
    case VerdictKind::kDuplicate:
      return "kDuplicate";
    case VerdictKind::kOutOfOrderSequence:
      return "kOutOfOrderSequence";
    case VerdictKind::kInvalidProducerEpoch:
      return "kInvalidProducerEpoch";
    case VerdictKind::kInvalidRecord:
      return "kInvalidRecord";
  }
  return "unknown VerdictKind";
}

Verdict Classify(const ProducerEntry* entry, const BatchInfo& batch) {
  if (batch.producer_id < 0) return Verdict();
  if (batch.producer_epoch < 0) {
    return Reject(VerdictKind::kInvalidRecord,
                  absl::StrCat("invalid producer epoch ", batch.producer_epoch,
                               " in a batch of producer ", batch.producer_id));
  }
  if (batch.is_control) {
    if (entry != nullptr && batch.producer_epoch < entry->epoch) {
      return OlderEpoch(*entry, batch, "transaction marker");
    }
    return Accept();
  }
  if (batch.base_sequence < 0) {
    return Reject(VerdictKind::kInvalidRecord,
                  absl::StrCat("invalid base sequence ", batch.base_sequence,
                               " in a batch of producer ", batch.producer_id));
  }
  if (batch.last_offset_delta < 0) {
    return Reject(
        VerdictKind::kInvalidRecord,
        absl::StrCat("invalid lastOffsetDelta ", batch.last_offset_delta,
                     " in a batch of producer ", batch.producer_id));
  }
  if (entry == nullptr) return Accept();  // D-10: see the file comment.
  if (batch.producer_epoch < entry->epoch) {
    return OlderEpoch(*entry, batch, "a batch");
  }
  if (batch.producer_epoch > entry->epoch) {
    if (batch.base_sequence == 0) return Accept();
    return OutOfOrder(batch, 0,
                      absl::StrCat(" (a new epoch starts at sequence 0; the "
                                   "current epoch is ",
                                   entry->epoch, ")"));
  }
  const CachedBatch* duplicate =
      entry->FindBatch(batch.base_sequence, batch.last_sequence());
  if (duplicate != nullptr) {
    Verdict verdict;
    verdict.kind = VerdictKind::kDuplicate;
    verdict.duplicate_of = *duplicate;
    verdict.reason = absl::StrCat(
        "duplicate of the batch of producer ", batch.producer_id, " at epoch ",
        batch.producer_epoch, " with sequences ", duplicate->first_seq, "..",
        duplicate->last_seq, " at offsets ", duplicate->base_offset, "..",
        duplicate->last_offset);
    return verdict;
  }
  const CachedBatch* newest = entry->newest();
  if (newest == nullptr) {
    if (batch.base_sequence == 0) return Accept();
    return OutOfOrder(batch, 0,
                      " (no batch of this epoch is cached, e.g. after a "
                      "fence or an epoch bump by a marker)");
  }
  if (IsNextSequence(newest->last_seq, batch.base_sequence)) return Accept();
  return OutOfOrder(batch, NextSequence(newest->last_seq, 1), "");
}

}  // namespace idempotence
}  // namespace kaas
