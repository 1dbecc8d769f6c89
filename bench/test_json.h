// File: bench/test_json.h
//
// A minimal, strict JSON parser (RFC 8259) for tests of the benchmark's JSON
// report: the values, with objects as sorted maps. Not for production (no
// depth limit beyond the tests' inputs, doubles only for numbers).
//
// Thread-safety: pure functions; values are plain data.

#ifndef KAAS_BENCH_TEST_JSON_H_
#define KAAS_BENCH_TEST_JSON_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kaas::test {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;  // UTF-8, escapes decoded
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  bool is_null() const { return kind == Kind::kNull; }
};

// Parses exactly one JSON value (surrounding whitespace allowed). Errors
// name the byte offset of the problem. Rejects: trailing commas, unquoted
// keys, single quotes, control characters in strings, invalid escapes,
// lone surrogates, invalid UTF-8, leading zeros, NaN/Infinity, duplicate
// keys, trailing garbage.
absl::StatusOr<JsonValue> ParseJson(absl::string_view text);

}  // namespace kaas::test

#endif  // KAAS_BENCH_TEST_JSON_H_
