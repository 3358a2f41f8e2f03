// The CLI reference page, written from the commands' option tables (see cli_reference.h).
#include "cli/cli_reference.h"

#include <fmt/format.h>

#include <string_view>

#include "cli/command_tables.h"
#include "cmdline/usage.h"

namespace kforge::cli {
namespace {

// Text for a Markdown table cell or paragraph: the characters Markdown would read as markup escaped.
std::string escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '*' || c == '_' || c == '|' || c == '<' || c == '[' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

std::string names(const cxxopts::HelpOptionDetails& option) {
  std::string out = option.s.empty() ? "" : "`-" + option.s + "`";
  for (const std::string& name : option.l) out += (out.empty() ? "`--" : ", `--") + name + "`";
  return out;
}

std::string value(const cxxopts::HelpOptionDetails& option) {
  if (option.is_boolean) return "";
  return option.is_container ? "VALUE (repeatable)" : "VALUE";
}

// "Usage:" splits cxxopts' help text into the description and the usage line.
void write_command(std::string& out, const cxxopts::Options& options) {
  const std::string text = options.help({"\x01 no group"});
  const size_t usage_at = text.find("\nUsage:\n  ");
  const std::string description = text.substr(0, usage_at);
  const std::string usage = text.substr(usage_at + 10, text.find_last_not_of('\n') - usage_at - 9);
  out += fmt::format("## {}\n\n`{}`\n\n```text\n{}\n```\n\n", options.program(), usage, description);
  out += "| Option | Value | Default | Description |\n| --- | --- | --- | --- |\n";
  for (const std::string& group : options.groups()) {
    for (const cxxopts::HelpOptionDetails& option : options.group_help(group).options) {
      if (option.desc.empty()) continue;  // a positional argument's slot: the usage line names it
      const std::string default_value =
          option.has_default && !option.is_boolean ? "`" + option.default_value + "`" : std::string();
      out += fmt::format("| {} | {} | {} | {} |\n", names(option), value(option), default_value, escaped(option.desc));
    }
  }
  out += "\n";
}

}  // namespace

std::string cli_reference_markdown() {
  std::string out =
      "# CLI reference\n\n"
      "<!-- Written by `kforge help --format markdown` from the option tables the commands parse with; "
      "`scripts/docs.sh --check` fails when this page differs from its output. -->\n\n"
      "Every command prints its part of this page with `kforge COMMAND --help`. The exit codes are in "
      "[Exit codes](exit-codes.md).\n\n"
      "```text\n";
  out += cmdline::usage();
  out += "```\n\n";
  for (const auto options : command_tables()) write_command(out, options());
  return out;
}

}  // namespace kforge::cli
