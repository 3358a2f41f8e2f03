// kforge help --format markdown, the CLI reference page: a section per command with the options its table holds.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

std::string kforge(const std::string& args, int* status) {
  std::string out;
  *status = run_command(std::string("'") + KFORGE_BIN + "' " + args, &out);
  return out;
}

// The commands `kforge --help` lists under "Commands:", one per line ("  run            train with ...").
std::vector<std::string> usage_commands() {
  int status = 0;
  std::istringstream usage(kforge("--help", &status));
  std::vector<std::string> commands;
  bool in_list = false;
  for (std::string line; std::getline(usage, line);) {
    if (line == "Commands:") {
      in_list = true;
    } else if (in_list && line.rfind("  ", 0) == 0) {
      commands.push_back(line.substr(2, line.find(' ', 2) - 2));
    } else if (in_list) {
      break;
    }
  }
  return commands;
}

TEST(CliReference, HasASectionPerCommandOfTheUsage) {
  int status = 0;
  const std::string page = kforge("help --format markdown", &status);
  ASSERT_EQ(status, 0) << page;
  const std::vector<std::string> commands = usage_commands();
  ASSERT_GE(commands.size(), 11u);  // run ... help, as `kforge --help` lists them today
  for (const std::string& command : commands) {
    EXPECT_NE(page.find("\n## kforge " + command + "\n"), std::string::npos) << "no section for " << command;
  }
}

TEST(CliReference, ListsEachCommandsOptionsWithDefaults) {
  int status = 0;
  const std::string page = kforge("help --format markdown", &status);
  ASSERT_EQ(status, 0) << page;
  // An option only its own command's table holds, for each command.
  expect_has(page, {"# CLI reference", "`--dry-run`", "`--nproc-per-node`, `--nproc_per_node`", "`-v`, `--verbose`",
                    "`--train-tokenizer`", "`--max-new-tokens`", "`--max-shard-size`", "`--log-y`", "`--input-file`",
                    "`--no-gemm`", "`--format`"});
  // A default from the table, and a description with Markdown's special characters escaped.
  expect_has(page, {"| `--model-type` | VALUE | `bpe` |", "| `--temperature` | VALUE | `1.0` |", "\\*.jsonl"});
}

TEST(CliReference, OnlyMarkdownIsAFormat) {
  int status = 0;
  const std::string out = kforge("help --format html", &status);
  EXPECT_EQ(status, 2) << out;
  expect_has(out, {"kforge help: --format html: the only format is markdown"});
}

TEST(CliReference, HelpAloneIsTheUsage) {
  int status = 0;
  const std::string out = kforge("help", &status);
  EXPECT_EQ(status, 0) << out;
  expect_has(out, {"Usage:", "kforge help [--format markdown]"});
}

}  // namespace
}  // namespace kforge::test
