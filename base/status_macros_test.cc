#include "base/status_macros.h"

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace kaas {
namespace {

absl::Status ReturnIfError(absl::Status input, int* reached) {
  KAAS_RETURN_IF_ERROR(input);
  ++*reached;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<int>> MakeInt(bool ok) {
  if (!ok) return absl::NotFoundError("no int");
  return std::make_unique<int>(7);
}

absl::StatusOr<int> AssignOrReturn(bool ok) {
  KAAS_ASSIGN_OR_RETURN(std::unique_ptr<int> value, MakeInt(ok));
  KAAS_ASSIGN_OR_RETURN(auto again, MakeInt(ok));  // two on one function
  return *value + *again;
}

TEST(StatusMacros, ReturnIfErrorStopsAtTheFirstError) {
  int reached = 0;
  EXPECT_TRUE(ReturnIfError(absl::OkStatus(), &reached).ok());
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(ReturnIfError(absl::InternalError("x"), &reached).code(),
            absl::StatusCode::kInternal);
  EXPECT_EQ(reached, 1);
}

TEST(StatusMacros, AssignOrReturnMovesTheValueOrPropagates) {
  EXPECT_EQ(AssignOrReturn(true).value(), 14);
  EXPECT_EQ(AssignOrReturn(false).status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kaas
