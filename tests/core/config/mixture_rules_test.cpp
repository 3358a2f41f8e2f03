// Mixture configs ([[data.datasets]], mix_temperature, [[data.phases]], the anneal shortcut): what
// each error names (file, line, key, value), and the typed sources and phases a valid one gives.
#include <gtest/gtest.h>

#include "config/rules.h"
#include "config_helpers.h"

namespace kforge::test {
namespace {

const std::string kSources =
    "[[data.datasets]]\npath = \"/d/web\"\nweight = 3.0\n"                   // lines 1-3
    "[[data.datasets]]\npath = \"/d/code/\"\nweight = 1.0\n"                 // lines 4-6
    "[[data.datasets]]\npath = \"/d/x\"\nname = \"books\"\nweight = 0.0\n";  // lines 7-10

// The message check_mixture raises on a config that loads; "" when it passes.
std::string mixture_error(const std::string& toml, const std::vector<std::string>& overrides = {}) {
  try {
    config::check_mixture(load(toml, overrides).tree);
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
  return "";
}

void expect_has(const std::string& message, const std::vector<std::string>& parts) {
  for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
}

TEST(MixtureConfig, ValidMixtureGivesNamedSourcesAndPhasesWithTheAnnealShortcutLast) {
  EXPECT_EQ(mixture_error(kSources + "[data]\nanneal_start_step = 40\nanneal_weights = { books = 2.0 }\n"), "");
  const config::JobConfig job =
      load(kSources + "[data]\nmix_temperature = 2.0\nanneal_start_step = 40\nanneal_weights = { books = 2.0 }\n");
  ASSERT_EQ(job.data.datasets.size(), 3u);
  EXPECT_EQ(job.data.datasets[0].name, "web");   // the path's last component
  EXPECT_EQ(job.data.datasets[1].name, "code");  // a trailing slash is not a component
  EXPECT_EQ(job.data.datasets[2].name, "books");
  EXPECT_EQ(job.data.datasets[2].weight, 0.0);
  EXPECT_EQ(job.data.mix_temperature, 2.0);
  ASSERT_EQ(job.data.phases.size(), 1u);
  EXPECT_EQ(job.data.phases[0].start_step, 40);
  EXPECT_EQ(job.data.phases[0].lr_scale, 1.0);
  EXPECT_EQ(job.data.phases[0].dataset_weights, (std::vector<std::pair<std::string, double>>{{"books", 2.0}}));
}

TEST(MixtureConfig, AnUnknownPhaseSourceIsNamedWithTheKnownOnes) {
  expect_has(mixture_error(kSources + "[[data.phases]]\nstart_step = 5\ndataset_weights = { wiki = 1.0 }\n"),
             {"cfg.toml:13:19: [data.phases[0]] dataset_weights = { wiki = 1.0 }",
              "'wiki' is not the name of a [[data.datasets]] source (sources: 'web', 'code', 'books')"});
  expect_has(mixture_error(kSources, {"--data.anneal_start_step=9", "--data.anneal_weights={'webb': 1.0}"}),
             {"command line: [data] anneal_weights = { webb = 1.0 }", "'webb' is not the name"});
}

TEST(MixtureConfig, DuplicateNamesAllZeroWeightsAndDatasetPathAreRefused) {
  expect_has(mixture_error(kSources + "[[data.datasets]]\npath = \"/e/web\"\n"),
             {"cfg.toml:12:8: [data.datasets[3]] path = \"/e/web\"", "a second source named 'web'"});
  expect_has(
      mixture_error("[[data.datasets]]\npath = \"a\"\nweight = 0.0\n[[data.datasets]]\npath = \"b\"\nweight = 0\n"),
      {"[data] datasets = [", "every source has weight 0"});
  expect_has(mixture_error(kSources, {"--data.dataset_path=/d/one"}),
             {"command line: [data] dataset_path = \"/d/one\"", "remove dataset_path"});
  expect_has(mixture_error("[[data.phases]]\nstart_step = 5\n"), {"[data] phases = [", "set [[data.datasets]]"});
}

TEST(MixtureConfig, PerSourceRulesNameTheKey) {
  expect_has(load_error(kSources, {"--data.mix_temperature=0"}),
             {"command line: [data] mix_temperature = 0.0", "must be > 0"});
  expect_has(load_error("[[data.datasets]]\npath = \"a\"\nweight = -1.0\n"),
             {"cfg.toml:3:10: [data.datasets[0]] weight = -1.0", "must be >= 0"});
  expect_has(load_error(kSources + "[data]\nanneal_start_step = 50\n[[data.phases]]\nstart_step = 10\n"),
             {"cfg.toml:12:21: [data] anneal_start_step = 50", "use phases for multi-phase scheduling"});
  expect_has(load_error(kSources + "[[data.phases]]\nstart_step = 10\n[[data.phases]]\nstart_step = 10\n"),
             {"[data.phases[1]] start_step = 10", "strictly increasing"});
}

}  // namespace
}  // namespace kforge::test
