// File: tools/kaaslog_main.cc
//
// `kaaslog`: the operator's tool for kaas-storage data dirs. Picks the
// subcommand (the demo when none is given), parses its flags and runs it.
// Exit status: 0 ok, 1 problems found (or the work failed), 2 usage.

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "glog/logging.h"
#include "tools/cli.h"
#include "tools/subcommands.h"

namespace kaas::tools {
namespace {

std::vector<const Subcommand*> AllSubcommands() {
  return {&DemoSubcommand(),   &BenchSubcommand(),     &DumpSubcommand(),
          &VerifySubcommand(), &CompactSubcommand(),   &AppendSubcommand(),
          &ReadSubcommand(),   &DemoChildSubcommand(), &BenchChildSubcommand()};
}

const Subcommand* FindSubcommand(const std::string& name) {
  for (const Subcommand* subcommand : AllSubcommands()) {
    if (subcommand->name == name) return subcommand;
  }
  return nullptr;
}

std::string GeneralHelp() {
  std::string help =
      "Usage: kaaslog [SUBCOMMAND] [FLAGS] [ARGS]\n\n"
      "The operator's tool for kaas-storage data dirs. Without a subcommand\n"
      "it runs the demo.\n\nSubcommands:\n";
  for (const Subcommand* subcommand : AllSubcommands()) {
    if (subcommand->hidden) continue;
    absl::StrAppend(&help, absl::StrFormat("  %-8s %s\n", subcommand->name,
                                           subcommand->summary));
  }
  absl::StrAppend(&help,
                  "\n'kaaslog SUBCOMMAND --help' describes each one.\n"
                  "Exit status: 0 ok, 1 problems found or the work failed, "
                  "2 usage.\n");
  return help;
}

bool IsHelp(const std::string& arg) {
  return arg == "help" || arg == "-h" || arg == "--help" || arg == "-help" ||
         arg == "--helpfull";
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && IsHelp(args[0])) {
    // `kaaslog help dump` is `kaaslog dump --help`.
    if (args[0] == "help" && args.size() > 1) {
      if (const Subcommand* subcommand = FindSubcommand(args[1])) {
        std::cout << SubcommandHelp(*subcommand);
        return kExitOk;
      }
    }
    std::cout << GeneralHelp();
    return kExitOk;
  }
  const Subcommand* subcommand = &DemoSubcommand();
  if (!args.empty() && args[0][0] != '-') {
    subcommand = FindSubcommand(args[0]);
    if (subcommand == nullptr) {
      std::cerr << "kaaslog: unknown subcommand \"" << args[0]
                << "\"\nRun 'kaaslog --help' for the list.\n";
      return kExitUsage;
    }
    args.erase(args.begin());
  }
  absl::StatusOr<CommandLine> command_line = ParseArguments(*subcommand, args);
  if (!command_line.ok()) {
    return UsageError(*subcommand, command_line.status().message());
  }
  if (command_line->help) {
    std::cout << SubcommandHelp(*subcommand);
    return kExitOk;
  }
  return subcommand->run(*command_line);
}

}  // namespace
}  // namespace kaas::tools

int main(int argc, char** argv) {
  // Engine warnings (recovery findings, ...) belong on stderr, not in files.
  FLAGS_logtostderr = true;
  google::InitGoogleLogging(argv[0]);
  return kaas::tools::Main(argc, argv);
}
