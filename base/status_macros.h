// File: base/status_macros.h
//
// Early-return helpers for absl::Status / absl::StatusOr, with the semantics of
// the ABSL_RETURN_IF_ERROR / ABSL_ASSIGN_OR_RETURN macros that only exist in
// Abseil LTS 20260526 and later (we are pinned to 20220623).
//
//   KAAS_RETURN_IF_ERROR(file->Sync());
//   KAAS_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> f, fs.OpenForRead(p));
//
// Both evaluate their argument exactly once.

#ifndef KAAS_BASE_STATUS_MACROS_H_
#define KAAS_BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define KAAS_RETURN_IF_ERROR(expr)                                   \
  do {                                                               \
    ::absl::Status kaas_status_ = (expr);                            \
    if (ABSL_PREDICT_FALSE(!kaas_status_.ok())) return kaas_status_; \
  } while (0)

#define KAAS_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define KAAS_STATUS_MACROS_CONCAT_(x, y) KAAS_STATUS_MACROS_CONCAT_INNER_(x, y)

#define KAAS_ASSIGN_OR_RETURN(lhs, rexpr) \
  KAAS_ASSIGN_OR_RETURN_IMPL_(            \
      KAAS_STATUS_MACROS_CONCAT_(kaas_statusor_, __LINE__), lhs, rexpr)

#define KAAS_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {               \
    return std::move(statusor).status();                  \
  }                                                       \
  lhs = std::move(statusor).value()

#endif  // KAAS_BASE_STATUS_MACROS_H_
