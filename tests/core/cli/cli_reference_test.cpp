// kforge help --format markdown, the CLI reference page: a section per command with the options its table holds.
#include <gtest/gtest.h>

#include <string>

#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

std::string kforge(const std::string& args, int* status) {
  std::string out;
  *status = run_command(std::string("'") + KFORGE_BIN + "' " + args, &out);
  return out;
}

TEST(CliReference, HasASectionPerCommandOfTheUsageWithItsOptions) {
  int status = 0;
  const std::string page = kforge("help --format markdown", &status);
  ASSERT_EQ(status, 0) << page;
  // Every command `kforge --help` lists, each with an option only its own table holds.
  expect_has(page, {"# CLI reference",
                    "## kforge run\n",
                    "`--dry-run`",
                    "## kforge launch\n",
                    "`--nproc-per-node`, `--nproc_per_node`",
                    "## kforge list-plugins\n",
                    "`-v`, `--verbose`",
                    "## kforge prepare-data\n",
                    "`--train-tokenizer`",
                    "## kforge generate\n",
                    "`--max-new-tokens`",
                    "## kforge eval\n",
                    "## kforge convert\n",
                    "`--max-shard-size`",
                    "## kforge report\n",
                    "`--log-y`",
                    "## kforge extract\n",
                    "`--input-file`",
                    "## kforge check-env\n",
                    "`--no-gemm`",
                    "## kforge help\n",
                    "`--format`"});
  // A default from the table, and a description with Markdown's special characters escaped.
  expect_has(page, {"| `--model-type` | VALUE | `bpe` |", "| `--temperature` | VALUE | `0.8` |", "\\*.jsonl"});
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
