// kforge config reference --format markdown: every section and key of kforge's schema and of the loaded plugins'
// declarations (type, default, allowed values, status with its reason, the declaring component, the components that
// read a key), a third party's [vlm] arch among them, the same bytes on every run and no paths.
#include <gtest/gtest.h>

#include <string>

#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

std::string kforge_output(const std::string& args, int* status) {
  std::string out;
  *status = run_command(std::string("'") + KFORGE_BIN + "' " + args + " 2>&1", &out);
  return out;
}

std::string reference(int* status) {
  return kforge_output("config reference --format markdown --plugin-dir '" + std::string(KFORGE_FIXTURE_DIR) + "/vlm_arch'",
                status);
}

TEST(ConfigReference, ListsKforgesKeysWithTypeDefaultAllowedValuesAndStatus) {
  int status = 0;
  const std::string page = reference(&status);
  ASSERT_EQ(status, 0) << page;
  expect_has(page, {"# Configuration reference", "## [model]\n", "## [optimizer]\n", "## [vlm]\n",
                    "## [train.freeze]\n",
                    "| `dim` | int | `4096` |  | honoured | kforge | model `transformer` (kforge-models) | model width |",
                    "| `norm_type` | string | `\"rmsnorm\"` | `rmsnorm`, `layernorm` | honoured | kforge |",
                    "| `num_threads` | int | `0` | magnitude <= 8192 | honoured | kforge |",
                    "| `cp` | int | `1` |  | honoured | kforge |",
                    "| `compile_model` | bool | `true` |  | no effect: kforge has no graph compiler | kforge |"});
}

TEST(ConfigReference, ListsEachComponentsOwnKeysAndTheKeysItReads) {
  int status = 0;
  const std::string page = reference(&status);
  ASSERT_EQ(status, 0) << page;
  expect_has(page, {"| `decay_embeddings` | bool | `false` |  | honoured | optimizer `adamw` (optimizers) |",
                    "| `sgd_momentum` | float | `0.9` |  | honoured | optimizer `sgd` (optimizers) |",
                    "| `lr` | float | `0.0003` |  | honoured | kforge | optimizer `adamw` (optimizers), optimizer `lion` "
                    "(optimizers)",
                    "| `mot_modalities` | string_list | `[\"image\", \"text\"]` |  | honoured | modality_strategy `mot` "
                    "(kforge-vlm) |  | modalities with their own weights |"});
}

TEST(ConfigReference, DocumentsAThirdPartyArchFromItsDeclarationsAlone) {
  int status = 0;
  const std::string page = reference(&status);
  ASSERT_EQ(status, 0) << page;
  expect_has(page, {"| `fixture_tower_layers` | int | `2` | 1 to 64 | honoured | modality_strategy `fixture_arch` "
                    "(fixture-vlm-arch) |  | layers of the fixture's image tower |",
                    "| `fixture_pool` | string | `\"mean\"` | `mean`, `max` | honoured |",
                    "| `fixture_group` | int | `1` | >= 1 | honoured |",
                    "| `fixture_legacy` | bool | `false` |  | no effect: the fixture has no legacy path |",
                    "modality_strategy `fixture_arch` (fixture-vlm-arch) | fixed text length (padded) |"});
}

TEST(ConfigReference, IsTheSameOnEveryRunAndNamesNoPath) {
  int first_status = 0, second_status = 0;
  const std::string first = reference(&first_status), second = reference(&second_status);
  ASSERT_EQ(first_status, 0) << first;
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.find(KFORGE_BINARY_DIR), std::string::npos);
  EXPECT_EQ(first.find(KFORGE_SOURCE_DIR), std::string::npos);
}

TEST(ConfigReference, AsksForTheReferenceInMarkdown) {
  int status = 0;
  expect_has(kforge_output("config", &status), {"kforge config: expected `kforge config reference`"});
  EXPECT_EQ(status, 2);
  expect_has(kforge_output("config reference --format html", &status),
             {"kforge config: --format html: the only format is markdown"});
  EXPECT_EQ(status, 2);
}

}  // namespace
}  // namespace kforge::test
