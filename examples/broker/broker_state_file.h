// File: examples/broker/broker_state_file.h
//
// The broker's own small state files in its data dir (the leader epoch,
// the producer-id block): one decimal number each, read with O_NOFOLLOW
// from a regular file only, and replaced atomically and durably (a temp
// file written and fsynced, renamed over the old one, the dir fsynced).
//
// Thread-safety: thread-compatible; one broker per data dir.

#ifndef KAAS_EXAMPLES_BROKER_BROKER_STATE_FILE_H_
#define KAAS_EXAMPLES_BROKER_BROKER_STATE_FILE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace kaas::broker {

// The number in <dir>/<name>; nullopt if the file does not exist. Errors:
// kDataLoss if it is a symbolic link, not a regular file, or does not hold
// a number in [0, max]; kInternal for I/O errors.
absl::StatusOr<std::optional<int64_t>> ReadStateNumber(const std::string& dir,
                                                       const std::string& name,
                                                       int64_t max);

// Replaces <dir>/<name> with `value`, durably. Errors: kInternal.
absl::Status WriteStateNumber(const std::string& dir, const std::string& name,
                              int64_t value);

}  // namespace kaas::broker

#endif  // KAAS_EXAMPLES_BROKER_BROKER_STATE_FILE_H_
