// File: tools/cli.cc

#include "tools/cli.h"

#include <algorithm>
#include <iostream>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "base/storage_error.h"
#include "glog/logging.h"

ABSL_FLAG(std::string, data_dir, "./kaas-data",
          "The engine's data dir (its default log dir).");
ABSL_FLAG(std::string, topic, "", "The topic (required).");
ABSL_FLAG(int32_t, partition, 0, "The partition number.");

namespace kaas::tools {
namespace {

bool IsHelpFlag(absl::string_view name) {
  return name == "h" || name == "help" || name == "helpfull" ||
         name == "helpshort";
}

// "--name=value" -> {"name", "value", true}; "-name" -> {"name", "", false}.
struct FlagArgument {
  std::string name;
  std::string value;
  bool has_value = false;
};

FlagArgument SplitFlagArgument(absl::string_view arg) {
  if (!absl::ConsumePrefix(&arg, "--")) absl::ConsumePrefix(&arg, "-");
  FlagArgument parsed;
  size_t equals = arg.find('=');
  parsed.name = std::string(arg.substr(0, equals));
  if (equals != absl::string_view::npos) {
    parsed.value = std::string(arg.substr(equals + 1));
    parsed.has_value = true;
  }
  return parsed;
}

bool LooksLikeFlag(absl::string_view arg) {
  return arg.size() > 1 && arg[0] == '-';
}

bool Accepts(const Subcommand& subcommand, absl::string_view name) {
  return std::find(subcommand.flags.begin(), subcommand.flags.end(), name) !=
         subcommand.flags.end();
}

absl::CommandLineFlag& FlagOf(absl::string_view name) {
  absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  CHECK(flag != nullptr) << "a subcommand lists the undefined flag --" << name;
  return *flag;
}

// `text` wrapped at `width` columns, each line after `indent`.
std::string Wrap(absl::string_view text, size_t width,
                 absl::string_view indent) {
  std::string wrapped;
  size_t column = 0;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (column > 0 && column + 1 + word.size() > width) {
      absl::StrAppend(&wrapped, "\n");
      column = 0;
    }
    if (column == 0) {
      absl::StrAppend(&wrapped, indent, word);
      column = indent.size() + word.size();
    } else {
      absl::StrAppend(&wrapped, " ", word);
      column += 1 + word.size();
    }
  }
  return wrapped;
}

absl::Status CheckPositional(const Subcommand& subcommand,
                             const std::vector<std::string>& positional) {
  const size_t expected = subcommand.positional_arguments;
  if (positional.size() == expected) return absl::OkStatus();
  if (expected == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(subcommand.name, " takes no positional arguments"));
  }
  CHECK_EQ(expected, 1u) << "only one positional argument is supported";
  return absl::InvalidArgumentError(absl::StrCat(
      subcommand.name, " takes exactly one ", subcommand.arguments));
}

}  // namespace

absl::StatusOr<CommandLine> ParseArguments(
    const Subcommand& subcommand, const std::vector<std::string>& args) {
  CommandLine result;
  // Help wins over every other problem of the command line.
  for (const std::string& arg : args) {
    if (arg == "--") break;
    if (LooksLikeFlag(arg) && IsHelpFlag(SplitFlagArgument(arg).name)) {
      result.help = true;
      return result;
    }
  }
  if (subcommand.raw_arguments) {
    result.positional = args;
    return result;
  }
  bool flags_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (flags_ended || !LooksLikeFlag(arg)) {
      result.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    FlagArgument parsed = SplitFlagArgument(arg);
    std::string name = parsed.name;
    bool negated = false;
    if (!Accepts(subcommand, name) && absl::StartsWith(name, "no") &&
        Accepts(subcommand, name.substr(2)) &&
        FlagOf(name.substr(2)).IsOfType<bool>()) {
      name = name.substr(2);
      negated = true;
    }
    if (!Accepts(subcommand, name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown flag --", parsed.name,
          absl::FindCommandLineFlag(parsed.name) != nullptr
              ? absl::StrCat(" (not a flag of `kaaslog ", subcommand.name, "`)")
              : ""));
    }
    absl::CommandLineFlag& flag = FlagOf(name);
    std::string value = parsed.value;
    if (flag.IsOfType<bool>()) {
      if (negated) {
        if (parsed.has_value) {
          return absl::InvalidArgumentError(
              absl::StrCat("--no", name, " takes no value"));
        }
        value = "false";
      } else if (!parsed.has_value) {
        value = "true";
      }
    } else if (!parsed.has_value) {
      if (i + 1 == args.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", name, " needs a value"));
      }
      value = args[++i];
    }
    std::string error;
    if (!flag.ParseFrom(value, &error)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "invalid value \"", value, "\" for --", name, ": ", error));
    }
    result.specified.insert(name);
  }
  absl::Status positional = CheckPositional(subcommand, result.positional);
  if (!positional.ok()) return positional;
  return result;
}

std::string SubcommandHelp(const Subcommand& subcommand) {
  std::string help =
      absl::StrCat("Usage: kaaslog ", subcommand.name,
                   subcommand.flags.empty() ? "" : " [FLAGS]",
                   subcommand.arguments.empty() ? "" : " ",
                   subcommand.arguments, "\n\n", subcommand.summary, "\n");
  if (!subcommand.details.empty()) {
    absl::StrAppend(&help, "\n", subcommand.details);
    if (help.back() != '\n') help.push_back('\n');
  }
  if (!subcommand.exit_status.empty()) {
    absl::StrAppend(&help,
                    Wrap(absl::StrCat("Exit status: ", subcommand.exit_status,
                                      ", 2 usage."),
                         78, ""),
                    "\n");
  }
  if (!subcommand.flags.empty()) {
    absl::StrAppend(&help, "\nFlags:\n");
    for (const std::string& name : subcommand.flags) {
      absl::CommandLineFlag& flag = FlagOf(name);
      std::string default_value = flag.DefaultValue();
      if (flag.IsOfType<std::string>()) {
        default_value = absl::StrCat("\"", default_value, "\"");
      }
      auto own_default = subcommand.help_defaults.find(name);
      if (own_default != subcommand.help_defaults.end()) {
        default_value = own_default->second;
      }
      absl::StrAppend(&help, "  --", name, " (default ", default_value, ")\n",
                      Wrap(flag.Help(), 78, "      "), "\n");
    }
  }
  return help;
}

int UsageError(const Subcommand& subcommand, absl::string_view message) {
  std::cerr << "kaaslog " << subcommand.name << ": " << message
            << "\nRun 'kaaslog " << subcommand.name << " --help' for usage.\n";
  return kExitUsage;
}

std::string Plural(int64_t n, absl::string_view singular,
                   absl::string_view plural) {
  return absl::StrCat(n, " ", n == 1 ? singular : plural);
}

std::string ErrorLine(const absl::Status& status) {
  return absl::StrCat("error=", KafkaErrorName(GetStorageErrorCode(status)),
                      " ", status.message());
}

int Failure(const Subcommand& subcommand, absl::string_view message) {
  std::cerr << "kaaslog " << subcommand.name << ": " << message << "\n";
  return kExitProblems;
}

}  // namespace kaas::tools
