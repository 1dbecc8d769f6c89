// File: tools/cli.h
//
// What every `kaaslog` subcommand shares: the subcommand descriptor, exit
// codes, command-line parsing against the subcommand's own flags, help
// texts, and the flags several subcommands use (--data_dir, --topic,
// --partition).
//
// Flags are Abseil flags (ABSL_FLAG), one global registry for the binary, but
// each subcommand accepts only the flags it lists: `kaaslog dump --repair` is
// a usage error, not a silently ignored flag. Parsing goes through Abseil's
// flag reflection (absl::FindCommandLineFlag + CommandLineFlag::ParseFrom)
// rather than absl::ParseCommandLine, because the latter exits with status 1
// on a bad flag and on --help, where kaaslog promises 2 and 0.
//
// Accepted syntax (as absl::ParseCommandLine's): --name=value, --name value
// (non-boolean flags), --name / --noname (booleans), one or two leading
// dashes; "--" ends the flags; positional arguments may be mixed with flags.
// -h, --help and --helpfull ask for the subcommand's help.
//
// Thread-safety: called from main() only.

#ifndef KAAS_TOOLS_CLI_H_
#define KAAS_TOOLS_CLI_H_

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

ABSL_DECLARE_FLAG(std::string, data_dir);
ABSL_DECLARE_FLAG(std::string, topic);
ABSL_DECLARE_FLAG(int32_t, partition);

namespace kaas::tools {

// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitProblems = 1;  // problems found, or the work failed
inline constexpr int kExitUsage = 2;     // bad command line

// The command line of one subcommand after parsing.
struct CommandLine {
  std::vector<std::string> positional;
  // Names of the flags given on the command line.
  std::set<std::string> specified;
  bool help = false;

  bool Specified(absl::string_view flag) const {
    return specified.count(std::string(flag)) > 0;
  }
};

struct Subcommand {
  std::string name;
  // Positional arguments for the synopsis, e.g. "PATH" or "< BATCHES".
  std::string arguments;
  // How many positional arguments the command line must give: 0, or 1 (the
  // one `arguments` names).
  int positional_arguments = 0;
  // One line for `kaaslog --help`.
  std::string summary;
  // The body of `kaaslog NAME --help` (paragraphs, already wrapped).
  std::string details;
  // What each exit code means for this subcommand, e.g. "0 ok, 1 a scenario
  // failed" (help adds "2 usage").
  std::string exit_status;
  // The absl flags this subcommand accepts.
  std::vector<std::string> flags;
  // Defaults this subcommand uses instead of the flags' own (when the flag
  // is not given), shown by --help: flag name -> default as shown.
  std::map<std::string, std::string> help_defaults;
  // Not listed by `kaaslog --help` (internal child processes).
  bool hidden = false;
  // Receives the arguments after the subcommand name unparsed (for
  // subcommands that parse their own arguments); `run` gets them as
  // `positional`.
  bool raw_arguments = false;
  // Runs the subcommand; returns the process exit code.
  int (*run)(const CommandLine& command_line) = nullptr;
};

// Parses `args` (the arguments after the subcommand name) against the flags
// `subcommand` accepts, setting those flags, and checks the number of
// positional arguments. Errors (unknown or foreign flag, missing or invalid
// value, wrong number of arguments) are InvalidArgument with a message
// naming the flag or the arguments expected. Does not parse when a help flag is
// present: returns help = true.
absl::StatusOr<CommandLine> ParseArguments(
    const Subcommand& subcommand, const std::vector<std::string>& args);

// The text of `kaaslog NAME --help`: synopsis, details and each flag with its
// help text and default.
std::string SubcommandHelp(const Subcommand& subcommand);

// Prints "kaaslog NAME: <message>" and a pointer to --help to stderr;
// returns kExitUsage.
int UsageError(const Subcommand& subcommand, absl::string_view message);

// "1 batch", "2 batches".
std::string Plural(int64_t n, absl::string_view singular,
                   absl::string_view plural);

// Prints "kaaslog NAME: <message>" to stderr; returns kExitProblems.
int Failure(const Subcommand& subcommand, absl::string_view message);

// An engine error as every subcommand prints it: "error=<KAFKA_ERROR_NAME>
// <message>" (the broker's view of it, base/storage_error.h).
std::string ErrorLine(const absl::Status& status);

}  // namespace kaas::tools

#endif  // KAAS_TOOLS_CLI_H_
