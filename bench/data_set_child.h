// File: bench/data_set_child.h
//
// What the data-set scenarios ((c), (d), (f)) share: the writer child that
// fills a data dir with the data set, and the end of a case.
//
// Thread-safety: thread-compatible (one case at a time).

#ifndef KAAS_BENCH_DATA_SET_CHILD_H_
#define KAAS_BENCH_DATA_SET_CHILD_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "bench/bench_report.h"
#include "bench/child_protocol.h"
#include "bench/scenarios.h"

namespace kaas::bench {

// The topic the writer child fills.
inline constexpr absl::string_view kDataSetTopic = "bench";

// Runs `<self> bench-child ...` and returns what the child reports.
absl::StatusOr<ChildWriteReport> WriteDataSetInChild(
    const ScenarioContext& context, const ChildWriteSpec& spec);

// The data set of `shape` written into `dir` by the child, never flushed
// and closed cleanly: what the read scenarios ((c), (f)) read back.
absl::StatusOr<ChildWriteReport> WriteClosedDataSet(
    const ScenarioContext& context, const std::string& dir,
    const std::string& topic, const BatchShape& shape);

// Removes the case's directory `dir` and records the first failure (the
// case's `status`, else the removal's) as the row's error.
void FinishCase(const ScenarioContext& context, const std::string& dir,
                absl::Status status, BenchRow* row);

}  // namespace kaas::bench

#endif  // KAAS_BENCH_DATA_SET_CHILD_H_
