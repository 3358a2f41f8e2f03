// Training on a data mixture: three sources with temperature-scaled weights and two phases. Each
// phase's per-source rows follow its weights within binomial noise (a zero weight draws none), the
// phase's lr_scale applies from exactly the step after its start_step, loss/<source> averages
// the step's rows of each source to train/loss, the anneal shortcut is one phase, and resuming
// across a phase boundary or from two ranks onto one continues the same global sample stream; the
// row losses behind loss/<source> are computed only on logged steps.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "data/mixture_sampler.h"
#include "data/npy_writer.h"
#include "support/launch_job.h"

namespace kforge::test {
namespace {

constexpr int kMixVocab = 64;
constexpr int64_t kMixSeqLen = 16;  // tiny_job_toml's train.seq_len
const std::vector<std::string> kMixNames = {"web", "code", "books"};

// Three sources of different sizes and token patterns under the fixture's root, mixed with the
// weights 5 : 3 : 2 at mix_temperature `temperature`, plus `extra` TOML (phases).
void make_mixture(TrainFixture& fx, double temperature, const std::string& extra) {
  const std::vector<int> lengths = {3000, 1500, 800};
  std::string sources;
  for (size_t s = 0; s < kMixNames.size(); ++s) {
    const auto dir = fx.root / "mix" / kMixNames[s];
    std::filesystem::create_directories(dir);
    std::vector<int> tokens(static_cast<size_t>(lengths[s]));
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * (3 + 2 * s) + s) % kMixVocab);
    data::write_npy_tokens(dir / "shard_0.npy", data::TokenDtype::uint16, tokens);
    sources += fmt::format("[[data.datasets]]\npath = \"{}\"\nweight = {}\n", dir.string(),
                           s == 0   ? 5
                           : s == 1 ? 3
                                    : 2);
  }
  const std::string path_line = fmt::format("dataset_path = \"{}\"\n", fx.data_dir.string());
  const size_t at = fx.toml.find(path_line);
  ASSERT_NE(at, std::string::npos);
  fx.toml.replace(at, path_line.size(), fmt::format("mix_temperature = {}\n", temperature));
  fx.toml += sources + extra;
}

const std::string kMixPhases =
    "[[data.phases]]\nstart_step = 80\ndataset_weights = { books = 0.0 }\nlr_scale = 0.5\n"
    "[[data.phases]]\nstart_step = 150\ndataset_weights = { web = 0.0, books = 8.0 }\nlr_scale = 0.25\n";

const std::vector<std::string> kMixRun = {"--scheduler.name=constant", "--scheduler.warmup_steps=0",
                                          "--eval.enabled=false", "--checkpoint.interval=1000"};

std::vector<std::string> mix_args(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Rows drawn from each source, from data/<name>/tokens (tokens since the start, logged every step).
std::vector<std::map<int64_t, double>> rows_so_far(const TrainFixture& fx) {
  std::vector<std::map<int64_t, double>> rows;
  for (const std::string& name : kMixNames) {
    auto tokens = metric(fx, "data/" + name + "/tokens");
    for (auto& [step, t] : tokens) t /= kMixSeqLen;
    rows.push_back(std::move(tokens));
  }
  return rows;
}

TEST(MixtureTraining, PhaseRowsFollowTheWeightsAndTheLrScaleSwitchesAtTheBoundary) {
  TrainFixture fx;
  constexpr double kTemperature = 2.0;
  make_mixture(fx, kTemperature, kMixPhases);
  const train::TrainingResult result = fx.run(mix_args(kMixRun, {"--train.max_steps=200"}), {});
  ASSERT_EQ(result.step, 200);
  const auto rows = rows_so_far(fx);
  // Phases: steps 1-80 with 5 : 3 : 2, 81-150 with 5 : 3 : 0, 151-200 with 0 : 3 : 8; 4 rows a step.
  const std::vector<std::pair<int64_t, int64_t>> spans = {{0, 80}, {80, 150}, {150, 200}};
  const std::vector<std::vector<double>> weights = {{5, 3, 2}, {5, 3, 0}, {0, 3, 8}};
  for (size_t k = 0; k < spans.size(); ++k) {
    const auto [from, to] = spans[k];
    const int64_t n = (to - from) * 4;
    const std::vector<double> p = data::mixture_probabilities(weights[k], kTemperature);
    double total = 0;
    for (size_t s = 0; s < kMixNames.size(); ++s) {
      const double count = rows[s].at(to) - (from == 0 ? 0.0 : rows[s].at(from));
      total += count;
      const double sigma = std::sqrt(static_cast<double>(n) * p[s] * (1 - p[s]));
      // 4.5 sigma of Binomial(n, p): a false alarm has probability < 7e-6 per source and phase.
      EXPECT_LE(std::abs(count - static_cast<double>(n) * p[s]), 4.5 * sigma)
          << "phase " << k << " source " << kMixNames[s] << ": " << count << " rows of " << n << " at p = " << p[s];
      if (p[s] == 0) EXPECT_EQ(count, 0) << "phase " << k << " drew a zero-weight source " << kMixNames[s];
    }
    EXPECT_EQ(total, static_cast<double>(n)) << "phase " << k;
  }
  // The step after a phase's start_step is its first (constant schedule: lr = 1e-2 x lr_scale).
  const auto lr = metric(fx, "train/lr");
  EXPECT_DOUBLE_EQ(lr.at(80), 1e-2);
  EXPECT_DOUBLE_EQ(lr.at(81), 0.5e-2);
  EXPECT_DOUBLE_EQ(lr.at(150), 0.5e-2);
  EXPECT_DOUBLE_EQ(lr.at(151), 0.25e-2);
  // loss/<source> is the mean over the step's rows of that source: the row-weighted mean is the
  // step's loss (every row has seq_len labels).
  const auto loss = metric(fx, "train/loss");
  std::vector<std::map<int64_t, double>> per_source;
  for (const std::string& name : kMixNames) per_source.push_back(metric(fx, "loss/" + name));
  for (int64_t step : {1, 50, 81, 120, 151, 200}) {
    double weighted = 0;
    for (size_t s = 0; s < kMixNames.size(); ++s) {
      const double r = rows[s].at(step) - (step == 1 ? 0.0 : rows[s].at(step - 1));
      EXPECT_EQ(per_source[s].count(step), r > 0 ? 1u : 0u) << kMixNames[s] << " at step " << step;
      if (r > 0) weighted += r * per_source[s].at(step);
    }
    EXPECT_NEAR(weighted / 4, loss.at(step), 1e-5 * loss.at(step)) << "step " << step;
  }
}

TEST(MixtureTraining, ResumingAcrossAPhaseBoundaryContinuesTheSampleOrderExactly) {
  const std::string phases =
      "[[data.phases]]\nstart_step = 6\ndataset_weights = { web = 0.5 }\nlr_scale = 0.5\n"
      "[[data.phases]]\nstart_step = 12\ndataset_weights = { code = 0.0 }\nlr_scale = 0.25\n";
  TrainFixture straight, split;
  make_mixture(straight, 1.0, phases);
  make_mixture(split, 1.0, phases);
  straight.run(mix_args(kMixRun, {"--train.max_steps=16"}), {});
  split.run(mix_args(kMixRun, {"--train.max_steps=9"}), {});  // stops in phase 1, between the boundaries
  const train::TrainingResult resumed = split.run(mix_args(kMixRun, {"--train.max_steps=16"}), {});
  ASSERT_EQ(resumed.resumed_from, 9);
  const auto la = metric(straight, "train/loss"), lb = metric(split, "train/loss");
  for (int64_t step = 1; step <= 16; ++step) EXPECT_EQ(la.at(step), lb.at(step)) << "step " << step;
  for (const std::string& name : kMixNames) {
    EXPECT_EQ(metric(straight, "data/" + name + "/tokens"), metric(split, "data/" + name + "/tokens")) << name;
  }
  EXPECT_EQ(metric(straight, "train/lr"), metric(split, "train/lr"));
  const auto a = checkpoint::CheckpointManager::load(straight.checkpoint_dir / "step_16");
  const auto b = checkpoint::CheckpointManager::load(split.checkpoint_dir / "step_16");
  EXPECT_EQ(a.train_state.at("mixture"), b.train_state.at("mixture"));
  EXPECT_EQ(a.train_state.at("mixture").at("samples").get<int64_t>(), 16 * 4);
  for (const auto& [name, t] : a.model) EXPECT_TRUE(at::equal(t, b.model.at(name))) << name;
}

TEST(MixtureTraining, TheAnnealShortcutIsOnePhaseWithLrScaleOne) {
  TrainFixture anneal, phase;
  make_mixture(anneal, 1.0, "");
  make_mixture(phase, 1.0, "[[data.phases]]\nstart_step = 5\ndataset_weights = { web = 0.0 }\n");
  const std::vector<std::string> shortcut = {"--data.anneal_start_step=5", "--data.anneal_weights={'web': 0.0}"};
  anneal.run(mix_args(kMixRun, mix_args({"--train.max_steps=10"}, shortcut)), {});
  phase.run(mix_args(kMixRun, {"--train.max_steps=10"}), {});
  EXPECT_EQ(metric(anneal, "train/loss"), metric(phase, "train/loss"));
  EXPECT_EQ(metric(anneal, "train/lr"), metric(phase, "train/lr"));
  const auto web = metric(anneal, "data/web/tokens");
  EXPECT_EQ(web.at(10), web.at(5)) << "the anneal phase drew a zero-weight source";
}

// The per-row cross-entropy behind loss/<source> is computed on the steps whose metrics are logged
// (steps 1, 5 and 10 at log_interval 5), and on no other: there the batches carry no sources.
TEST(MixtureTraining, RowLossesAreComputedOnlyOnLoggedSteps) {
  TrainFixture fx;
  make_mixture(fx, 1.0, "");
  std::vector<int64_t> tagged, computed;
  int64_t step = 0;
  const train::StepFn watching_step = [&](train::Trainer& trainer, const std::vector<data::Batch>& batches) {
    ++step;
    if (batches.front().sources.defined()) tagged.push_back(step);
    train::StepResult result = train::standard_step(trainer, batches);
    if (!result.row_losses.empty()) computed.push_back(step);
    return result;
  };
  fx.run(mix_args(kMixRun, {"--train.max_steps=10", "--metrics.log_interval=5"}), {}, watching_step);
  EXPECT_EQ(tagged, (std::vector<int64_t>{1, 5, 10}));
  EXPECT_EQ(computed, tagged);
  std::set<int64_t> logged;  // every logged step has rows of some source
  for (const std::string& name : kMixNames) {
    for (const auto& [s, loss] : metric(fx, "loss/" + name)) logged.insert(s);
  }
  EXPECT_EQ(logged, (std::set<int64_t>{1, 5, 10}));
}

// Two ranks with 2 rows each, then one rank with 4: the same global batches, so the same losses
// (up to the order of fp32 sums) and exactly the same rows per source.
TEST(MixtureTraining, ResumingTwoRanksOnOneContinuesTheGlobalSampleStream) {
  const std::string phases = "[[data.phases]]\nstart_step = 4\ndataset_weights = { books = 6.0 }\nlr_scale = 0.5\n";
  TrainFixture straight, split;
  make_mixture(straight, 1.0, phases);
  make_mixture(split, 1.0, phases);
  const auto two = mix_args(mix_args(kMixRun, replicated_over(2)), {"--train.batch_size=2", "--train.max_steps=10"});
  launch(straight, 2, two);
  launch(split, 2, mix_args(two, {"--train.max_steps=6"}));
  std::string output;
  ASSERT_EQ(launch(split, 1, mix_args(kMixRun, {"--train.batch_size=4", "--train.max_steps=10"}), &output), 0)
      << output;
  EXPECT_NE(output.find("resumed from step 6"), std::string::npos) << output;
  EXPECT_NE(output.find("step 7: data phase 1 of 1 (from step 4)"), std::string::npos) << output;
  expect_close(metric(straight, "train/loss"), metric(split, "train/loss"), 1, 10);
  for (const std::string& name : kMixNames) {
    EXPECT_EQ(metric(straight, "data/" + name + "/tokens"), metric(split, "data/" + name + "/tokens")) << name;
  }
  EXPECT_EQ(metric(straight, "train/lr"), metric(split, "train/lr"));
}

}  // namespace
}  // namespace kforge::test
