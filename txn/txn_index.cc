#include "txn/txn_index.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace kaas {
namespace txn {

absl::Status TxnIndex::OnTransactionalData(int64_t producer_id,
                                           int64_t base_offset) {
  if (producer_id < 0 || base_offset < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot open a transaction of producer ", producer_id,
                     " at offset ", base_offset, ": both must be >= 0"));
  }
  if (open_by_producer_.try_emplace(producer_id, base_offset).second) {
    open_by_first_offset_.emplace(base_offset, producer_id);
  }
  return absl::OkStatus();
}

absl::Status TxnIndex::OnMarker(int64_t producer_id, ControlKind kind,
                                int64_t marker_offset) {
  if (producer_id < 0 || marker_offset < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot apply a transaction marker of producer ", producer_id,
        " at offset ", marker_offset, ": both must be >= 0"));
  }
  auto open = open_by_producer_.find(producer_id);
  if (open == open_by_producer_.end()) return absl::OkStatus();
  const int64_t first_offset = open->second;
  if (marker_offset < first_offset) {
    return absl::FailedPreconditionError(absl::StrCat(
        "transaction marker of producer ", producer_id, " at offset ",
        marker_offset, " is below its open transaction's first offset ",
        first_offset));
  }
  if (kind == ControlKind::kAbort) {
    KAAS_RETURN_IF_ERROR(
        aborted_.Insert(AbortedTxn{producer_id, first_offset, marker_offset}));
  }
  open_by_first_offset_.erase({first_offset, producer_id});
  open_by_producer_.erase(open);
  return absl::OkStatus();
}

absl::optional<int64_t> TxnIndex::FirstUnstableOffset() const {
  if (open_by_first_offset_.empty()) return absl::nullopt;
  return open_by_first_offset_.begin()->first;
}

std::vector<OpenTxn> TxnIndex::open_transactions() const {
  std::vector<OpenTxn> result;
  result.reserve(open_by_first_offset_.size());
  for (const auto& [first_offset, producer_id] : open_by_first_offset_) {
    result.push_back(OpenTxn{producer_id, first_offset});
  }
  return result;
}

TxnIndexSnapshot TxnIndex::ToProto() const {
  TxnIndexSnapshot snapshot;
  snapshot.mutable_open()->Reserve(
      static_cast<int>(open_by_first_offset_.size()));
  for (const auto& [first_offset, producer_id] : open_by_first_offset_) {
    OpenTxnSnapshot* proto = snapshot.add_open();
    proto->set_producer_id(producer_id);
    proto->set_first_offset(first_offset);
  }
  snapshot.mutable_aborted()->Reserve(static_cast<int>(aborted_.size()));
  for (const AbortedTxn& txn : aborted_.entries()) {
    AbortedTxnSnapshot* proto = snapshot.add_aborted();
    proto->set_producer_id(txn.producer_id);
    proto->set_first_offset(txn.first_offset);
    proto->set_last_offset(txn.last_offset);
  }
  return snapshot;
}

absl::StatusOr<TxnIndex> TxnIndex::FromProto(const TxnIndexSnapshot& snapshot) {
  TxnIndex index;
  for (int i = 0; i < snapshot.open_size(); ++i) {
    const OpenTxnSnapshot& open = snapshot.open(i);
    if (open.producer_id() < 0 || open.first_offset() < 0) {
      return absl::DataLossError(absl::StrCat(
          "transaction index snapshot: open transaction ", i, " of producer ",
          open.producer_id(), " at offset ", open.first_offset(),
          ": producer id and offset must be >= 0"));
    }
    if (!index.open_by_producer_
             .try_emplace(open.producer_id(), open.first_offset())
             .second) {
      return absl::DataLossError(absl::StrCat(
          "transaction index snapshot: open transaction ", i, ": producer ",
          open.producer_id(), " has more than one open transaction"));
    }
    index.open_by_first_offset_.emplace(open.first_offset(),
                                        open.producer_id());
  }
  std::vector<AbortedTxn> aborted;
  aborted.reserve(static_cast<size_t>(snapshot.aborted_size()));
  for (const AbortedTxnSnapshot& proto : snapshot.aborted()) {
    aborted.push_back(AbortedTxn{proto.producer_id(), proto.first_offset(),
                                 proto.last_offset()});
  }
  absl::StatusOr<AbortedTxnList> list =
      AbortedTxnList::FromSorted(std::move(aborted));
  if (!list.ok()) {
    return absl::DataLossError(
        absl::StrCat("transaction index snapshot: ", list.status().message()));
  }
  index.aborted_ = *std::move(list);
  return index;
}

}  // namespace txn
}  // namespace kaas
