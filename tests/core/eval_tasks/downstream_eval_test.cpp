// `kforge eval --tasks` against tests/oracles/downstream_eval.py (lm-eval-harness 0.4's requests and metrics over the
// model exported with `kforge convert --to hf`): requests, log-likelihoods, greedy flags, windows, generations,
// metrics and groups; determinism; two ranks under `kforge launch` give one rank's bytes; shared-prefix scoring against
// running every request whole; the refusals.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/eval_tasks/task_files.h"
#include "core/interop/interop_test_util.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test::eval_tasks {
namespace {
namespace fs = std::filesystem;
using interop::file_bytes;
using interop::kforge_cli;
using interop::trained_dense;
using nlohmann::json;

constexpr int64_t kBootstrapIters = 2000;  // lm-eval's chunks of 1000, twice: the perplexity stderr's resampling
constexpr double kLoglikelihoodTolerance = 1e-5;  // the fp32 bound, relative to each request's |ll|

struct EvalRun {
  json results;
  std::vector<json> samples;
  std::string results_bytes;
  std::string samples_bytes;
};

/// `kforge eval --tasks` (and `extra` options), in one process, or on `nproc` ranks under `kforge launch`.
EvalRun run_kforge(const fs::path& task_dir, const std::string& tasks, const std::string& label, int nproc = 1,
                   const std::string& extra = "") {
  const fs::path out = temp_dir(label);
  const std::string launcher =
      nproc == 1 ? "" : fmt::format("launch --nproc-per-node {} --log-dir {} -- ", nproc, (out / "logs").string());
  int rc = 0;
  const std::string output = kforge_cli(
      fmt::format("{}eval --checkpoint {} --tasks {} --task-dir {} --batch-size 3 --bootstrap-iters {} --output {} "
                  "--log-samples {} {}",
                  launcher, trained_dense().string(), tasks, task_dir.string(), kBootstrapIters,
                  (out / "results.json").string(), (out / "samples.jsonl").string(), extra),
      &rc);
  EXPECT_EQ(rc, 0) << output;
  EvalRun run;
  run.results_bytes = file_bytes(out / "results.json");
  run.samples_bytes = file_bytes(out / "samples.jsonl");
  if (rc != 0) return run;
  run.results = json::parse(run.results_bytes);
  std::istringstream lines(file_bytes(out / "samples.jsonl"));
  for (std::string line; std::getline(lines, line);) run.samples.push_back(json::parse(line));
  return run;
}

class DownstreamEval : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    task_dir_ = new fs::path(temp_dir("downstream_tasks"));
    tasks_ = new std::string(write_tasks(*task_dir_));
    first_ = new EvalRun(run_kforge(*task_dir_, *tasks_, "downstream_run1"));
  }
  static fs::path* task_dir_;
  static std::string* tasks_;
  static EvalRun* first_;
};
fs::path* DownstreamEval::task_dir_ = nullptr;
std::string* DownstreamEval::tasks_ = nullptr;
EvalRun* DownstreamEval::first_ = nullptr;

TEST_F(DownstreamEval, ResultsJsonHasLmEvalLayoutAndIsIdenticalAcrossRuns) {
  ASSERT_FALSE(first_->results.is_null());
  for (const char* key : {"results", "groups", "group_subtasks", "configs", "versions", "n-shot", "n-samples", "config"}) {
    EXPECT_TRUE(first_->results.contains(key)) << key;
  }
  EXPECT_EQ(first_->results["versions"]["answer"], 3);
  EXPECT_EQ(first_->results["n-shot"]["choice"], 1);
  EXPECT_EQ(first_->results["n-shot"]["partial"], 2);
  EXPECT_EQ(first_->results["results"]["rolling"]["word_perplexity_stderr,none"], "N/A");
  EXPECT_EQ(first_->results["group_subtasks"]["grp"], json({"choice", "partial"}));
  const EvalRun second = run_kforge(*task_dir_, *tasks_, "downstream_run2");
  EXPECT_EQ(first_->results_bytes, second.results_bytes);
}

TEST_F(DownstreamEval, TwoRanksUnderLaunchWriteOneRanksResultsAndSamplesByteForByte) {
  ASSERT_FALSE(first_->results.is_null());
  // Every output type: multiple choice, loglikelihood, rolling windows (batches of 3 split over the ranks) and
  // generations (requests split over the ranks).
  for (const char* type : {"multiple_choice", "loglikelihood", "loglikelihood_rolling", "generate_until"}) {
    bool present = false;
    for (const auto& [name, config] : first_->results["configs"].items()) present |= config["output_type"] == type;
    EXPECT_TRUE(present) << type;
  }
  const EvalRun two = run_kforge(*task_dir_, *tasks_, "downstream_two_ranks", 2);
  EXPECT_EQ(first_->results_bytes, two.results_bytes);
  EXPECT_EQ(first_->samples_bytes, two.samples_bytes);
}

TEST_F(DownstreamEval, SharedPrefixScoringGivesEachRequestsLoglikelihoodOfRunningItWhole) {
  ASSERT_FALSE(first_->results.is_null());
  EXPECT_EQ(first_->results["config"]["shared_prefix"], true);
  const EvalRun whole = run_kforge(*task_dir_, *tasks_, "downstream_whole", 1, "--no-shared-prefix");
  ASSERT_FALSE(whole.results.is_null());
  EXPECT_EQ(whole.results["config"]["shared_prefix"], false);
  ASSERT_EQ(whole.samples.size(), first_->samples.size());
  std::map<std::string, size_t> choices;  // multiple-choice requests per task, document and context: shared ones
  double worst = 0;
  for (size_t i = 0; i < whole.samples.size(); ++i) {
    const json &ours = first_->samples[i], &theirs = whole.samples[i];
    ASSERT_EQ(ours["context_tokens"], theirs["context_tokens"]) << i;
    if (!ours.contains("loglikelihood")) {
      EXPECT_EQ(ours, theirs) << i;  // generations: no log-likelihoods to share
      continue;
    }
    ++choices[ours["task"].dump() + ours["doc_id"].dump() + ours["context_tokens"].dump()];
    const double err = std::abs(ours["loglikelihood"].get<double>() - theirs["loglikelihood"].get<double>()) /
                       std::abs(theirs["loglikelihood"].get<double>());
    worst = std::max(worst, err);
    EXPECT_LE(err, kLoglikelihoodTolerance) << ours.dump() << " whole " << theirs.dump();
    EXPECT_EQ(ours["is_greedy"], theirs["is_greedy"]) << ours.dump();
  }
  size_t shared = 0;
  for (const auto& [key, n] : choices) shared += n >= 2 ? n : 0;
  EXPECT_GE(shared, 4u) << "the authored tasks should have contexts with several choices";
  std::cout << fmt::format("[ measure ] {} requests sharing a context, largest relative difference {:.3g}\n", shared,
                           worst);
}

TEST_F(DownstreamEval, OracleAgreesOnRequestsLoglikelihoodsGenerationsAndMetrics) {
  if (!oracle_available()) GTEST_SKIP() << "no python3 with torch and numpy";
  ASSERT_FALSE(first_->samples.empty());
  const fs::path work = temp_dir("downstream_oracle");
  int rc = 0;
  const std::string converted =
      kforge_cli(fmt::format("convert --to hf {} {} --dtype float32", trained_dense().string(), (work / "hf").string()),
                 &rc);
  ASSERT_EQ(rc, 0) << converted;
  {
    std::ofstream samples(work / "samples.jsonl");
    for (const json& s : first_->samples) samples << s.dump() << "\n";
  }
  std::string output;
  // The tiny tokenizer: BOS 1 (the prefix token), EOS 2, 60 pieces.
  ASSERT_EQ(run_oracle("downstream_eval.py",
                       {(work / "hf").string(), task_dir_->string(), *tasks_, (work / "samples.jsonl").string(), "1",
                        "2", "60", "1234", std::to_string(kBootstrapIters), (work / "oracle.json").string()},
                       &output),
            0)
      << output;
  const json oracle = json::parse(file_bytes(work / "oracle.json"));

  // Requests: kforge's (a rolling document's windows all name it once) are the oracle's, built from the task files.
  std::vector<json> requests;
  for (const json& s : first_->samples) {
    json r = {{"task", s["task"]}, {"doc_id", s["doc_id"]}, {"option", s.value("option", 0)},
              {"context", s["context"]}, {"continuation", s.value("continuation", "")}};
    if (requests.empty() || requests.back() != r) requests.push_back(r);
  }
  ASSERT_EQ(requests.size(), oracle["requests"].size());
  for (size_t i = 0; i < requests.size(); ++i) EXPECT_EQ(requests[i], oracle["requests"][i]) << "request " << i;

  // Per request: log-likelihood within 1e-5 relative, the same greedy flag; rolling windows; greedy generations.
  size_t ll = 0, gen = 0, window_doc = 0, stopped = 0;
  double worst = 0;
  std::vector<json> rolling_windows;
  for (const json& s : first_->samples) {
    if (s.contains("generated_tokens")) {
      const json& theirs = oracle["generated"][gen++];
      const auto& ours = s["generated_tokens"];
      ASSERT_GE(theirs.size(), ours.size());
      for (size_t k = 0; k < ours.size(); ++k) EXPECT_EQ(ours[k], theirs[k]) << "generation " << gen - 1;
      if (theirs.size() > ours.size()) {  // kforge stopped early: at EOS (the oracle's next token) or a stop string
        const bool eos = theirs.back() == 2;
        stopped += eos ? 0 : 1;
        const std::string decoded = s["decoded"];
        EXPECT_TRUE(eos || decoded.find('\n') != std::string::npos || decoded.find(" q") != std::string::npos)
            << s.dump();
      }
      continue;
    }
    const double ours = s["loglikelihood"], theirs = oracle["loglikelihood"][ll];
    const double err = std::abs(ours - theirs) / std::abs(theirs);
    worst = std::max(worst, err);
    EXPECT_LE(err, kLoglikelihoodTolerance) << s.dump() << " oracle " << theirs;
    EXPECT_EQ(s["is_greedy"], oracle["greedy"][ll]) << s.dump();
    ++ll;
    if (s["task"] == "rolling") {
      if (s["option"] == 0 && (rolling_windows.empty() || s["doc_id"] != rolling_windows.back()["doc"])) {
        rolling_windows.push_back({{"doc", s["doc_id"]}, {"windows", json::array()}});
      }
      rolling_windows.back()["windows"].push_back(
          {{"context", s["context_tokens"]}, {"continuation", s["continuation_tokens"]}});
    }
  }
  EXPECT_EQ(ll, oracle["loglikelihood"].size());
  EXPECT_EQ(gen, oracle["generated"].size());
  EXPECT_GT(stopped, 0u) << "no generation ended at a stop string: the authored task no longer exercises them";
  ASSERT_EQ(rolling_windows.size(), oracle["windows"].size());
  for (const json& doc : rolling_windows) EXPECT_EQ(doc["windows"], oracle["windows"][window_doc++]);
  EXPECT_GT(oracle["windows"][0].size(), 1u) << "the long document should need more than one window";
  std::cout << fmt::format("[ measure ] {} log-likelihoods, largest relative error {:.3g}\n", ll, worst);

  // Metrics from kforge's log-likelihoods: exactly the oracle's (same inputs, lm-eval's formulas, same summation
  // order). From the oracle's own log-likelihoods: the accuracies equal, the perplexities within the bound the
  // log-likelihoods' 1e-5 gives (|d ppl / ppl| = |d mean ll| <= 1e-5 max |ll|).
  for (const auto& [task, metrics] : oracle["metrics_kforge_lls"].items()) {
    for (const auto& [key, value] : metrics.items()) {
      EXPECT_EQ(first_->results["results"][task][key], value) << task << " " << key;
      const json& own = oracle["metrics_oracle_lls"][task][key];
      if (key.find("acc") == 0 || key.find("exact_match") == 0) {
        if (key.find("_stderr") == std::string::npos) EXPECT_EQ(value, own) << task << " " << key;
      } else if (value.is_number() && key.find("_stderr") == std::string::npos) {
        const double bound = kLoglikelihoodTolerance * oracle["ll_bound"][task].get<double>();
        const double scale = key.find("bits_per_byte") == 0 ? 1.0 : value.get<double>();
        EXPECT_LE(std::abs(value.get<double>() - own.get<double>()), bound * scale * 1.01) << task << " " << key;
      }
    }
  }
  for (const auto& [key, value] : oracle["metrics_groups"]["grp"].items()) {
    EXPECT_EQ(first_->results["results"]["grp"][key], value) << "grp " << key;
  }
}

TEST(DownstreamEvalRefusals, BadTaskFilesAndOptionsExitTwoNamingTheProblem) {
  const fs::path dir = temp_dir("downstream_bad");
  write_tasks(dir);
  std::ofstream(dir / "choice" / "task.toml", std::ios::app) << "shots = 3\n";
  int rc = 0;
  std::string out = kforge_cli(
      fmt::format("eval --checkpoint {} --tasks choice --task-dir {}", trained_dense().string(), dir.string()), &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("unknown key 'shots'"), std::string::npos) << out;
  out = kforge_cli(fmt::format("eval --checkpoint {} --tasks missing --task-dir {}", trained_dense().string(),
                               dir.string()),
                   &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("missing/task.toml"), std::string::npos) << out;
  out = kforge_cli(fmt::format("eval --checkpoint {} --limit 3", trained_dense().string()), &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("--limit is an option of downstream tasks"), std::string::npos) << out;
  std::ofstream(dir / "rolling" / "test.jsonl", std::ios::app) << "{\"txt\": \"x\"}\n";
  out = kforge_cli(
      fmt::format("eval --checkpoint {} --tasks rolling --task-dir {}", trained_dense().string(), dir.string()), &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("test.jsonl:4: needs \"text\""), std::string::npos) << out;
}

}  // namespace
}  // namespace kforge::test::eval_tasks
