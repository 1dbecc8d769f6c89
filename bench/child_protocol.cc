#include "bench/child_protocol.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"

namespace kaas::bench {
namespace {

constexpr absl::string_view kReportPrefix = "bench-child ";

std::optional<BatchShape> ShapeNamed(absl::string_view name) {
  for (const BatchShape& shape : {kBatch1KiB, kBatch16KiB}) {
    if (shape.name == name) return shape;
  }
  return std::nullopt;
}

// Splits "key=value" words into a map; duplicate or malformed words fail.
absl::StatusOr<absl::flat_hash_map<std::string, std::string>> KeyValues(
    const std::vector<std::string>& words, absl::string_view prefix,
    absl::string_view what) {
  absl::flat_hash_map<std::string, std::string> values;
  for (const std::string& word : words) {
    const size_t equals = word.find('=');
    absl::string_view key = absl::string_view(word).substr(0, equals);
    if (equals == std::string::npos || !absl::ConsumePrefix(&key, prefix) ||
        key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": malformed argument \"", word, "\""));
    }
    if (!values.emplace(std::string(key), word.substr(equals + 1)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": \"", key, "\" given twice"));
    }
  }
  return values;
}

absl::StatusOr<std::string> Take(
    absl::flat_hash_map<std::string, std::string>& values,
    absl::string_view key, absl::string_view what) {
  auto it = values.find(key);
  if (it == values.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": \"", key, "\" is missing"));
  }
  std::string value = std::move(it->second);
  values.erase(it);
  return value;
}

template <typename Int>
absl::StatusOr<Int> TakeInt(
    absl::flat_hash_map<std::string, std::string>& values,
    absl::string_view key, absl::string_view what) {
  KAAS_ASSIGN_OR_RETURN(std::string text, Take(values, key, what));
  Int value;
  if (!absl::SimpleAtoi(text, &value)) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": \"", key, "\" is not an integer: \"", text, "\""));
  }
  return value;
}

absl::Status NoneLeft(
    const absl::flat_hash_map<std::string, std::string>& values,
    absl::string_view what) {
  if (values.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": unknown argument \"", values.begin()->first, "\""));
}

}  // namespace

std::vector<std::string> ChildWriteArgs(const ChildWriteSpec& spec) {
  return {
      absl::StrCat("--data_dir=", spec.data_dir),
      absl::StrCat("--topic=", spec.topic),
      absl::StrCat("--batch=", spec.shape.name),
      absl::StrCat("--bytes=", spec.bytes),
      absl::StrCat("--flush_interval=", spec.flush_interval_messages),
      absl::StrCat("--end=", spec.crash ? "crash" : "close"),
  };
}

absl::StatusOr<ChildWriteSpec> ParseChildWriteArgs(
    const std::vector<std::string>& args) {
  constexpr absl::string_view kWhat = "bench-child";
  KAAS_ASSIGN_OR_RETURN(auto values, KeyValues(args, "--", kWhat));
  ChildWriteSpec spec;
  KAAS_ASSIGN_OR_RETURN(spec.data_dir, Take(values, "data_dir", kWhat));
  KAAS_ASSIGN_OR_RETURN(spec.topic, Take(values, "topic", kWhat));
  KAAS_ASSIGN_OR_RETURN(std::string batch, Take(values, "batch", kWhat));
  std::optional<BatchShape> shape = ShapeNamed(batch);
  if (!shape.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kWhat, ": --batch must be 1KiB or 16KiB, not \"", batch, "\""));
  }
  spec.shape = *shape;
  KAAS_ASSIGN_OR_RETURN(spec.bytes, TakeInt<uint64_t>(values, "bytes", kWhat));
  KAAS_ASSIGN_OR_RETURN(spec.flush_interval_messages,
                        TakeInt<int64_t>(values, "flush_interval", kWhat));
  KAAS_ASSIGN_OR_RETURN(std::string end, Take(values, "end", kWhat));
  if (end != "close" && end != "crash") {
    return absl::InvalidArgumentError(absl::StrCat(
        kWhat, ": --end must be close or crash, not \"", end, "\""));
  }
  spec.crash = end == "crash";
  KAAS_RETURN_IF_ERROR(NoneLeft(values, kWhat));
  return spec;
}

std::string FormatChildReport(const ChildWriteReport& report) {
  return absl::StrCat(kReportPrefix, "end_offset=", report.end_offset,
                      " high_watermark=", report.high_watermark,
                      " batches=", report.batches, " bytes=", report.bytes,
                      "\n");
}

absl::StatusOr<ChildWriteReport> ParseChildReport(
    absl::string_view stdout_text) {
  constexpr absl::string_view kWhat = "bench-child report";
  for (absl::string_view line : absl::StrSplit(stdout_text, '\n')) {
    if (!absl::ConsumePrefix(&line, kReportPrefix)) continue;
    std::vector<std::string> words =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    KAAS_ASSIGN_OR_RETURN(auto values, KeyValues(words, "", kWhat));
    ChildWriteReport report;
    KAAS_ASSIGN_OR_RETURN(report.end_offset,
                          TakeInt<int64_t>(values, "end_offset", kWhat));
    KAAS_ASSIGN_OR_RETURN(report.high_watermark,
                          TakeInt<int64_t>(values, "high_watermark", kWhat));
    KAAS_ASSIGN_OR_RETURN(report.batches,
                          TakeInt<int64_t>(values, "batches", kWhat));
    KAAS_ASSIGN_OR_RETURN(report.bytes,
                          TakeInt<uint64_t>(values, "bytes", kWhat));
    KAAS_RETURN_IF_ERROR(NoneLeft(values, kWhat));
    return report;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the writer child printed no report line; its stdout was: \"",
      stdout_text, "\""));
}

}  // namespace kaas::bench
