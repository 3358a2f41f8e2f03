// MoE end to end: configs/train/debug_moe.toml is a valid MoE job, and its MoE settings (and the
// sigmoid router's) train on the tiny fixture corpus, log moe/* metrics and resume bit-exactly.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model_builder.h"
#include "core/train/train_fixture.h"

namespace kforge::test::models {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const config::JobConfig& debug_moe_job() {
  static const config::JobConfig job =
      job_for(read_file(std::filesystem::path(KFORGE_SOURCE_DIR) / "configs/train/debug_moe.toml"));
  return job;
}

/// debug_moe.toml's [model] MoE keys as overrides for the fixture's tiny model.
std::vector<std::string> debug_moe_overrides() {
  const auto m = debug_moe_job().view("model");
  return {"--model.num_experts=" + std::to_string(m.get_int("num_experts")),
          "--model.moe_top_k=" + std::to_string(m.get_int("moe_top_k")),
          "--model.moe_router=" + m.get_string("moe_router"),
          "--model.moe_expert_ffn_multiplier=" + std::to_string(m.get_float("moe_expert_ffn_multiplier")),
          "--model.moe_aux_loss_weight=" + std::to_string(m.get_float("moe_aux_loss_weight")),
          "--model.moe_router_z_loss_weight=" + std::to_string(m.get_float("moe_router_z_loss_weight"))};
}

TEST(DebugMoEConfig, IsAFourExpertTopTwoModelOfTheDebugShape) {
  const auto m = debug_moe_job().view("model");
  EXPECT_EQ(m.get_int("num_experts"), 4);
  EXPECT_EQ(m.get_int("moe_top_k"), 2);
  EXPECT_EQ(m.get_int("dim"), 256);
  plugins::Components comps(host().registry, debug_moe_job());
  auto model = comps.model();
  EXPECT_EQ(count_params(*model), model->num_params_estimate());
  EXPECT_EQ(model->named_parameters()["layers.3.mlp.experts.3.up_proj.weight"].sizes(), (at::IntArrayRef{384, 256}));
}

struct TrainCase {
  const char* label;
  std::vector<std::string> extra;  ///< appended to debug_moe's MoE overrides
};

class MoETraining : public ::testing::TestWithParam<TrainCase> {
 protected:
  std::vector<std::string> overrides(std::vector<std::string> more) const {
    auto all = debug_moe_overrides();
    all.insert(all.end(), GetParam().extra.begin(), GetParam().extra.end());
    all.insert(all.end(), more.begin(), more.end());
    return all;
  }
};

TEST_P(MoETraining, LearnsLogsMoEMetricsAndResumesBitExactly) {
  TrainFixture straight;
  auto all = std::make_shared<RecordingHook>();
  straight.run(overrides({"--train.grad_accum_steps=2"}), {all});
  ASSERT_EQ(all->losses.size(), 20u);
  EXPECT_LT(all->losses.at(20), all->losses.at(1));
  const std::string metrics = read_file(straight.checkpoint_dir / "metrics.jsonl");
  for (const char* key : {"moe/aux_loss", "moe/router_z_loss", "moe/expert_balance"}) {
    EXPECT_NE(metrics.find(key), std::string::npos) << key;
  }

  TrainFixture split;
  auto first = std::make_shared<RecordingHook>();
  first->stop_at = 10;
  split.run(overrides({"--train.grad_accum_steps=2", "--checkpoint.interval=1000"}), {first});
  auto second = std::make_shared<RecordingHook>();
  const auto resumed = split.run(overrides({"--train.grad_accum_steps=2", "--checkpoint.interval=1000"}), {second});
  EXPECT_EQ(resumed.resumed_from, 10);
  ASSERT_EQ(second->losses.size(), 10u);
  for (int64_t step = 11; step <= 20; ++step) {
    EXPECT_EQ(second->losses.at(step), all->losses.at(step)) << "step " << step;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Routers, MoETraining,
    ::testing::Values(TrainCase{"debug_moe", {}},
                      TrainCase{"sigmoid",
                                {"--model.moe_router=sigmoid_topk", "--model.moe_bias_schedule=linear_warmup",
                                 "--model.moe_sequence_aux_loss_weight=0.1", "--model.moe_capacity_factor=1.25",
                                 "--model.moe_shared_experts=1", "--model.moe_packed_experts=true"}}),
    [](const auto& info) { return std::string(info.param.label); });

}  // namespace
}  // namespace kforge::test::models
