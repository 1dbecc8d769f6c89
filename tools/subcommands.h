// File: tools/subcommands.h
//
// The subcommands of `kaaslog`, one descriptor each (tools/cli.h), defined in
// the file that implements them. tools/kaaslog_main.cc dispatches to them.
//
// Thread-safety: the descriptors are immutable once built.

#ifndef KAAS_TOOLS_SUBCOMMANDS_H_
#define KAAS_TOOLS_SUBCOMMANDS_H_

#include "tools/cli.h"

namespace kaas::tools {

// demo.cc: the guided tour (the default subcommand), and its hidden crash
// child (demo_child.cc).
const Subcommand& DemoSubcommand();
const Subcommand& DemoChildSubcommand();

// bench.cc: the standard benchmark workload, and its hidden writer child.
const Subcommand& BenchSubcommand();
const Subcommand& BenchChildSubcommand();

// dump.cc: decode a partition dir or one file.
const Subcommand& DumpSubcommand();

// compact.cc: one compaction pass over a partition, offline.
const Subcommand& CompactSubcommand();

// verify.cc: check a data dir read-only, or repair it.
const Subcommand& VerifySubcommand();

// append_read.cc: batches in from stdin, batches out to stdout.
const Subcommand& AppendSubcommand();
const Subcommand& ReadSubcommand();

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_SUBCOMMANDS_H_
