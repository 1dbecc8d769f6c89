// File: testing/status_matchers.h
//
// gMock matchers and assertions for absl::Status / absl::StatusOr, in the
// shape of absl_testing::IsOk / StatusIs (Abseil LTS 20240722+, newer than our
// pin), plus a matcher for the engine's typed errors:
//
//   EXPECT_OK(fs.SyncDir(dir));
//   ASSERT_OK_AND_ASSIGN(auto file, fs.OpenForRead(path));
//   EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound, HasSubstr("x")));
//   EXPECT_THAT(result, HasStorageError(StorageErrorCode::kNotLeader));
//
// Prefer a specific StatusIs/HasStorageError over "not OK".

#ifndef KAAS_TESTING_STATUS_MATCHERS_H_
#define KAAS_TESTING_STATUS_MATCHERS_H_

#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "base/storage_error.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kaas::test {
namespace internal {

inline const absl::Status& GetStatus(const absl::Status& status) {
  return status;
}

template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

}  // namespace internal

MATCHER(IsOk, "is OK") {
  const absl::Status& status = internal::GetStatus(arg);
  if (!status.ok()) *result_listener << "status: " << status;
  return status.ok();
}

MATCHER_P2(StatusIs, code, message_matcher,
           "has code " + ::testing::PrintToString(code)) {
  const absl::Status& status = internal::GetStatus(arg);
  *result_listener << "status: " << status;
  return status.code() == code &&
         ::testing::ExplainMatchResult(
             message_matcher, std::string(status.message()), result_listener);
}

MATCHER_P(HasStorageError, storage_code,
          "carries storage error " +
              std::string(::kaas::StorageErrorCodeName(storage_code))) {
  const absl::Status& status = internal::GetStatus(arg);
  *result_listener << "status: " << status << " ("
                   << ::kaas::StorageErrorCodeName(
                          ::kaas::GetStorageErrorCode(status))
                   << ")";
  return ::kaas::GetStorageErrorCode(status) == storage_code;
}

MATCHER_P2(HasStorageErrorWithMessage, storage_code, message_matcher,
           "carries storage error " +
               std::string(::kaas::StorageErrorCodeName(storage_code))) {
  const absl::Status& status = internal::GetStatus(arg);
  *result_listener << "status: " << status;
  return ::kaas::GetStorageErrorCode(status) == storage_code &&
         ::testing::ExplainMatchResult(
             message_matcher, std::string(status.message()), result_listener);
}

MATCHER_P(IsOkAndHolds, value_matcher, "is OK and holds a matching value") {
  if (!arg.ok()) {
    *result_listener << "status: " << arg.status();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

}  // namespace kaas::test

#define EXPECT_OK(expr) EXPECT_THAT((expr), ::kaas::test::IsOk())
#define ASSERT_OK(expr) ASSERT_THAT((expr), ::kaas::test::IsOk())

#define KAAS_TESTING_CONCAT_INNER_(x, y) x##y
#define KAAS_TESTING_CONCAT_(x, y) KAAS_TESTING_CONCAT_INNER_(x, y)

// ASSERT_OK_AND_ASSIGN(lhs, rexpr): asserts rexpr is OK, then assigns its
// value to lhs (which may be a declaration).
#define ASSERT_OK_AND_ASSIGN(lhs, rexpr)                                     \
  ASSERT_OK_AND_ASSIGN_IMPL_(KAAS_TESTING_CONCAT_(kaas_statusor_, __LINE__), \
                             lhs, rexpr)

#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                               \
  ASSERT_THAT(statusor.status(), ::kaas::test::IsOk());  \
  lhs = std::move(statusor).value()

#endif  // KAAS_TESTING_STATUS_MATCHERS_H_
