// File: placement/error_messages.h
//
// Formatting shared by the error messages of //placement (package-internal):
// how values are quoted and how a configuration error names its entry.
//
// Thread-safety: pure functions.

#ifndef KAAS_PLACEMENT_ERROR_MESSAGES_H_
#define KAAS_PLACEMENT_ERROR_MESSAGES_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace kaas::placement {

// `value` in double quotes, C-escaped (octal), so that control characters, NULs
// and other bytes from a hostile config cannot garble a log line.
std::string Quote(absl::string_view value);

// InvalidArgument carrying StorageErrorCode::kInvalidConfig, with the message
// "log dirs: <message>".
absl::Status LogDirsConfigError(absl::string_view message);

// As LogDirsConfigError, for one entry of the list:
// "log dirs entry <index>: <message>" (index counts from 0).
absl::Status LogDirsEntryError(size_t index, absl::string_view message);

}  // namespace kaas::placement

#endif  // KAAS_PLACEMENT_ERROR_MESSAGES_H_
