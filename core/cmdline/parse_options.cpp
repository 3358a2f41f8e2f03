// Parsing a subcommand's options (see parse_options.h): "did you mean" for an unknown option, the option named for a
// value that does not parse, and the usage error with the help.
#include "cmdline/parse_options.h"

#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "cmdline/did_you_mean.h"
#include "cmdline/process_exit_codes.h"

namespace kforge::cmdline {
namespace {
// Every option's spelling as typed: "--name" for each long name, "-n" for a short one.
std::vector<std::string> spellings(const cxxopts::Options& options) {
  std::vector<std::string> out;
  for (const std::string& group : options.groups()) {
    for (const cxxopts::HelpOptionDetails& o : options.group_help(group).options) {
      for (const std::string& name : o.l) out.push_back("--" + name);
      if (!o.s.empty()) out.push_back("-" + o.s);
    }
  }
  return out;
}

// What cxxopts left unmatched: an unknown option (first), else an argument no option or
// positional takes.
std::string unmatched_message(const std::vector<std::string>& unmatched, const cxxopts::Options& options) {
  for (const std::string& arg : unmatched) {
    if (arg.size() < 2 || arg[0] != '-') continue;
    const std::string name = arg.substr(0, arg.find('='));
    return fmt::format("unknown option '{}'.{}", name, did_you_mean(name, spellings(options)));
  }
  return fmt::format("unexpected argument '{}'.", unmatched.front());
}

// cxxopts names the value it could not parse ("Argument 'x' failed to parse"), not the option:
// find the option that was given that value.
std::string bad_value_message(const std::string& what, int argc, char** argv) {
  const size_t open = what.find(cxxopts::LQUOTE), close = what.rfind(cxxopts::RQUOTE);
  if (open == std::string::npos || close == std::string::npos || close < open) return what;
  const std::string value = what.substr(open + cxxopts::LQUOTE.size(), close - open - cxxopts::LQUOTE.size());
  for (int k = 1; k < argc; ++k) {
    const std::string arg = argv[k];
    if (arg.empty() || arg[0] != '-') continue;
    const size_t eq = arg.find('=');
    const bool given = eq != std::string::npos ? arg.substr(eq + 1) == value : k + 1 < argc && argv[k + 1] == value;
    if (given) return fmt::format("'{}' is not a valid value for {}.", value, arg.substr(0, eq));
  }
  return what;
}

}  // namespace

ParsedOptions parse_options(cxxopts::Options& options, int argc, char** argv, const std::string& help) {
  std::string problem;
  try {
    options.allow_unrecognised_options();
    cxxopts::ParseResult result = options.parse(argc, argv);
    if (result.unmatched().empty()) {
      if (result.count("help") == 0) return {std::move(result), kExitOk};
      std::cout << (help.empty() ? options.help() : help);
      return {std::nullopt, kExitOk};
    }
    problem = unmatched_message(result.unmatched(), options);
  } catch (const cxxopts::exceptions::incorrect_argument_type& e) {
    problem = bad_value_message(e.what(), argc, argv);
  } catch (const cxxopts::exceptions::exception& e) {
    problem = e.what();
  }
  std::cerr << fmt::format("{}: {} ({} --help lists the options)\n", options.program(), problem, options.program());
  return {std::nullopt, kExitUsage};
}

int usage_error(const cxxopts::Options& options, const std::string& problem) {
  std::cerr << options.program() << ": " << problem << "\n\n" << options.help();
  return kExitUsage;
}

}  // namespace kforge::cmdline
