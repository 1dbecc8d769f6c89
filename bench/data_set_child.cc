// File: bench/data_set_child.cc

#include "bench/data_set_child.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "bench/subprocess.h"
#include "fs/fs_util.h"

namespace kaas::bench {

absl::StatusOr<ChildWriteReport> WriteDataSetInChild(
    const ScenarioContext& context, const ChildWriteSpec& spec) {
  if (context.self_executable.empty()) {
    return absl::FailedPreconditionError(
        "no executable to run the writer child (self_executable is empty)");
  }
  std::vector<std::string> argv = {context.self_executable,
                                   std::string(kBenchChildCommand)};
  for (std::string& arg : ChildWriteArgs(spec)) argv.push_back(std::move(arg));
  KAAS_ASSIGN_OR_RETURN(ChildOutcome outcome, RunChild(argv));
  if (outcome.exit_code != 0) {
    return absl::InternalError(absl::StrCat(
        "the writer child \"", context.self_executable, " ", kBenchChildCommand,
        "\" exited with code ", outcome.exit_code));
  }
  return ParseChildReport(outcome.stdout_text);
}

absl::StatusOr<ChildWriteReport> WriteClosedDataSet(
    const ScenarioContext& context, const std::string& dir,
    const std::string& topic, const BatchShape& shape) {
  ChildWriteSpec spec;
  spec.data_dir = dir;
  spec.topic = topic;
  spec.shape = shape;
  spec.bytes = context.data_set_bytes;
  spec.flush_interval_messages = 0;
  spec.crash = false;
  return WriteDataSetInChild(context, spec);
}

void FinishCase(const ScenarioContext& context, const std::string& dir,
                absl::Status status, BenchRow* row) {
  absl::Status removed = fs::RemoveTree(*context.fs, dir);
  if (status.ok()) status = removed;
  if (!status.ok()) row->error = std::string(status.ToString());
}

}  // namespace kaas::bench
