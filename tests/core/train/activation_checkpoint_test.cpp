// Activation checkpointing ([train] activation_checkpointing): "full" and "selective" against "none" — the same
// losses, gradients and in-place state bit for bit (dense and MoE transformers, fp32 and bf16 autocast, gradient
// accumulation, a frozen parameter), under FSDP and data parallelism on two ranks (threads, and FSDP as two
// processes through kforge launch); the recomputation runs each unit's function again exactly once per backward,
// fires no capture twice, and the activations kept between forward and backward shrink (live heap bytes, one
// thread).
#include "train/activation_checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <malloc.h>

#include <map>
#include <memory>
#include <optional>

#include "kforge/sdk/error.h"
#include "parallel/fully_sharded.h"
#include "parallel/precision.h"
#include "parallel/replicated_model.h"
#include "plugins/models/model_builder.h"
#include "support/launch_job.h"
#include "support/tiny_blocks_model.h"
#include "support/two_ranks.h"
#include "train_fixture.h"

namespace kforge::test {
namespace {

using train::ActivationCheckpointing;
using train::CheckpointMode;

constexpr CheckpointMode kModes[] = {CheckpointMode::none, CheckpointMode::full, CheckpointMode::selective};

std::unique_ptr<ActivationCheckpointing> checkpointing(sdk::Model& model, CheckpointMode mode) {
  return mode == CheckpointMode::none ? nullptr : std::make_unique<ActivationCheckpointing>(model, mode);
}

// Two blocks x + tanh(inner(x)), inner = x W_i^T run through run_module(i, "inner"); counts every call.
class CountingModel final : public sdk::Model {
 public:
  CountingModel() {
    at::Generator gen = at::detail::createCPUGenerator(3);
    embed_ = register_parameter("embed", at::randn({7, 4}, gen));
    w_ = {register_parameter("w0", at::randn({4, 4}, gen)), register_parameter("w1", at::randn({4, 4}, gen))};
  }
  int block_calls[2] = {0, 0}, module_calls[2] = {0, 0};
  at::Tensor forward(const at::Tensor& tokens) override {
    at::Tensor x = embed_.index_select(0, tokens.reshape({-1}));
    for (size_t i = 0; i < 2; ++i) {
      x = run_block(i, x, [this, i](const at::Tensor& in) {
        ++block_calls[i];
        return in + at::tanh(run_module(i, "inner", in, [this, i](const at::Tensor& y) {
                 ++module_calls[i];
                 return at::matmul(y, w_[i].t());
               }));
      });
    }
    return x.sum();
  }
  std::vector<sdk::ModelBlock> blocks() const override {
    return {{"b0", {"w0"}, {"inner"}}, {"b1", {"w1"}, {"inner"}}};
  }
  double flops_per_token(int64_t) const override { return 0; }
  int64_t num_params_estimate() const override { return 0; }

 private:
  at::Tensor embed_;
  std::vector<at::Tensor> w_;
};

TEST(ActivationCheckpointing, FullRunsEachBlockAgainInTheBackwardSelectiveOnlyTheModules) {
  const at::Tensor tokens = at::arange(6, at::kLong);
  struct Want {
    CheckpointMode mode;
    int block_calls, module_calls, recomputations;
  };
  for (const Want want : {Want{CheckpointMode::none, 1, 1, 0}, Want{CheckpointMode::full, 2, 2, 2},
                          Want{CheckpointMode::selective, 1, 2, 2}}) {
    CountingModel model;
    const auto ac = checkpointing(model, want.mode);
    model.forward(tokens).backward();
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(model.block_calls[i], want.block_calls) << "block " << i << ", mode " << static_cast<int>(want.mode);
      EXPECT_EQ(model.module_calls[i], want.module_calls) << "block " << i << ", mode " << static_cast<int>(want.mode);
    }
    if (ac) EXPECT_EQ(ac->recomputations(), want.recomputations);
  }
  CountingModel model;  // without gradients (evaluation) nothing is kept for a recomputation
  const ActivationCheckpointing ac(model, CheckpointMode::full);
  {
    at::NoGradGuard no_grad;
    model.forward(tokens);
  }
  EXPECT_EQ(model.block_calls[0], 1);
  EXPECT_EQ(ac.recomputations(), 0);
}

TEST(ActivationCheckpointing, RestoresTheRunnersItReplaced) {
  CountingModel model;
  int outer = 0;
  model.set_block_runner([&](size_t, const at::Tensor& in, const sdk::Model::BlockFn& fn) {
    ++outer;
    return fn(in);
  });
  {
    const ActivationCheckpointing ac(model, CheckpointMode::full);
    model.forward(at::arange(3, at::kLong)).backward();
    EXPECT_EQ(outer, 2);  // the runner installed before still runs, once per block (not for the recomputation)
    EXPECT_EQ(model.block_calls[0], 2);
  }
  model.forward(at::arange(3, at::kLong)).backward();
  EXPECT_EQ(outer, 4);
  EXPECT_EQ(model.block_calls[0], 3);  // no recomputation once it is gone
}

TEST(ActivationCheckpointing, SelectiveOnAModelWithoutCheckpointableModulesIsRefusedNamingTheKey) {
  TinyModel model;
  try {
    ActivationCheckpointing ac(model, CheckpointMode::selective);
    FAIL() << "accepted";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[train] activation_checkpointing = \"selective\": the model declares no "
                                         "checkpointable modules"),
              std::string::npos)
        << e.what();
  }
}

struct StepResult {
  std::vector<double> losses;
  std::map<std::string, at::Tensor> grads, state;  ///< state: every parameter and buffer after the step
};

// `micro_batches` forward/backward passes of cross-entropy + the model's auxiliary losses (as the step does).
StepResult transformer_step(const std::string& model_toml, CheckpointMode mode, int micro_batches,
                            std::optional<at::ScalarType> autocast = std::nullopt, const std::string& frozen = "") {
  at::manual_seed(5);
  const auto model = models::build_model(model_toml);
  model->train();
  if (!frozen.empty()) model->named_parameters()[frozen].requires_grad_(false);
  const auto ac = checkpointing(*model, mode);
  at::Generator gen = at::detail::createCPUGenerator(11);
  StepResult r;
  for (int k = 0; k < micro_batches; ++k) {
    const at::Tensor tokens = at::randint(64, {2, 17}, gen);
    at::Tensor loss;
    {
      const parallel::AutocastGuard guard(autocast);
      const at::Tensor logits = model->forward(tokens.narrow(1, 0, 16));
      loss = at::cross_entropy_loss(logits.reshape({-1, 64}).to(at::kFloat), tokens.narrow(1, 1, 16).reshape({-1}));
      for (const auto& [name, aux] : model->auxiliary_losses()) loss = loss + aux;
    }
    (loss / micro_batches).backward();
    r.losses.push_back(loss.item<double>());
  }
  for (const auto& p : model->named_parameters()) {
    if (p.value().grad().defined()) r.grads.emplace(p.key(), p.value().grad().clone());
    r.state.emplace(p.key(), p.value().detach().clone());
  }
  for (const auto& b : model->named_buffers()) r.state.emplace(b.key(), b.value().clone());
  return r;
}

void expect_identical(const StepResult& got, const StepResult& want, const std::string& what) {
  EXPECT_EQ(got.losses, want.losses) << what;
  ASSERT_EQ(got.grads.size(), want.grads.size()) << what;
  for (const auto& [name, grad] : want.grads) {
    ASSERT_TRUE(got.grads.count(name)) << what << ": no gradient for " << name;
    EXPECT_TRUE(at::equal(got.grads.at(name), grad)) << what << ": gradient of " << name;
  }
  for (const auto& [name, value] : want.state)
    EXPECT_TRUE(at::equal(got.state.at(name), value)) << what << ": " << name;
}

const std::string kDense =
    "[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 64\n"
    "max_seq_len = 16\n";
// configs/train/debug_moe.toml's MoE settings on a small shape.
const std::string kMoE = kDense +
                         "num_experts = 4\nmoe_top_k = 2\nmoe_router = \"softmax_topk\"\nmoe_expert_ffn_multiplier = "
                         "0.5\nmoe_aux_loss_weight = 0.01\nmoe_router_z_loss_weight = 0.001\n";
// The sigmoid router changes its balancing bias and EMA in place in every training forward.
const std::string kMoESigmoid = kDense +
                                "num_experts = 4\nmoe_top_k = 2\nmoe_router = \"sigmoid_topk\"\n"
                                "moe_sequence_aux_loss_weight = 0.01\nmoe_aux_loss_weight = 0.01\n"
                                "moe_router_z_loss_weight = 0.001\nmoe_frequency = 2\n";

TEST(ActivationCheckpointing, TransformerLossesGradientsAndRouterStateEqualNoneBitForBit) {
  for (const auto& [shape, toml] : {std::pair{"dense", kDense}, {"moe", kMoE}, {"moe_sigmoid", kMoESigmoid}}) {
    const StepResult none = transformer_step(toml, CheckpointMode::none, 2);
    ASSERT_EQ(none.grads.count("layers.1.mlp.router.gate.weight"), std::string(shape) == "dense" ? 0u : 1u);
    for (const CheckpointMode mode : {CheckpointMode::full, CheckpointMode::selective}) {
      expect_identical(transformer_step(toml, mode, 2), none,
                       std::string(shape) + (mode == CheckpointMode::full ? " full" : " selective"));
    }
  }
}

TEST(ActivationCheckpointing, FrozenParameterAndBf16AutocastEqualNone) {
  const std::string frozen = "layers.0.attention.q_proj.weight";
  const StepResult none = transformer_step(kMoE, CheckpointMode::none, 1, std::nullopt, frozen);
  EXPECT_EQ(none.grads.count(frozen), 0u);
  expect_identical(transformer_step(kMoE, CheckpointMode::full, 1, std::nullopt, frozen), none, "frozen, full");
  expect_identical(transformer_step(kMoE, CheckpointMode::selective, 1, std::nullopt, frozen), none,
                   "frozen, selective");
  const StepResult bf16 = transformer_step(kDense, CheckpointMode::none, 1, at::kBFloat16);
  expect_identical(transformer_step(kDense, CheckpointMode::full, 1, at::kBFloat16), bf16, "bf16 full");
  expect_identical(transformer_step(kDense, CheckpointMode::selective, 1, at::kBFloat16), bf16, "bf16 selective");
}

TEST(ActivationCheckpointing, CaptureFiresOncePerForward) {
  for (const CheckpointMode mode : kModes) {
    at::manual_seed(5);
    const auto model = models::build_model(kDense);
    const auto ac = checkpointing(*model, mode);
    int captured = 0;
    model->set_capture({"layers.0.attn_out", "layers.1.residual", "layers.1.attention"},
                       [&](const std::string&, const at::Tensor&) { ++captured; });
    model->forward(at::arange(16, at::kLong).view({1, 16})).sum().backward();
    model->set_capture({}, {});
    EXPECT_EQ(captured, 3) << "mode " << static_cast<int>(mode);
  }
}

int64_t live_heap_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<int64_t>(m.uordblks + m.hblkhd);
}

// Heap bytes held from the forward to the backward (the graph's saved activations), on one thread.
int64_t bytes_kept_by_forward(CheckpointMode mode) {
  at::manual_seed(5);
  const auto model = models::build_model(
      "[model]\ndim = 64\nn_layers = 4\nn_heads = 4\nvocab_size = 64\n"
      "max_seq_len = 64\n");
  const auto ac = checkpointing(*model, mode);
  const at::Tensor tokens = at::arange(8 * 64, at::kLong).remainder(64).view({8, 64});
  const int64_t before = live_heap_bytes();
  at::Tensor loss = model->forward(tokens).square().mean();
  const int64_t kept = live_heap_bytes() - before;
  loss.backward();
  return kept;
}

TEST(ActivationCheckpointing, TheForwardKeepsFewerActivations) {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);  // mallinfo2 counts the main arena (and every mmap)
  const int64_t none = bytes_kept_by_forward(CheckpointMode::none);
  const int64_t selective = bytes_kept_by_forward(CheckpointMode::selective);
  const int64_t full = bytes_kept_by_forward(CheckpointMode::full);
  at::set_num_threads(threads);
  std::cout << "bytes kept from forward to backward: none " << none << ", selective " << selective << ", full " << full
            << "\n";
  // full keeps the 4 block inputs (8 x 64 x 64 fp32 = 128 KiB each) where none keeps every block's activations.
  EXPECT_LT(full, none / 3);
  EXPECT_LT(selective, none);
  EXPECT_LT(full, selective);
}

// Two ranks (threads): FSDP or plain data parallelism around TinyModel (whose last block changes a parameter in
// place in its forward) or a transformer built beforehand; the gradients each rank ends with.
using Grads = std::map<std::string, at::Tensor>;

std::vector<Grads> tiny_fsdp(CheckpointMode mode, int micro_batches) {
  std::vector<Grads> out(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model;
    model.mutate_in_forward = true;
    const dist::Group no_replicas;
    parallel::FullyShardedModel fsdp(model, rt.dp(), no_replicas);
    const auto ac = checkpointing(model, mode);
    for (int k = 0; k < micro_batches; ++k) {
      (tiny_loss(fsdp.forward(tiny_tokens(rt.rank())), rt.rank()) / micro_batches).backward();
    }
    fsdp.finish_backward();
    for (const auto& p : fsdp.shards()) {
      out[static_cast<size_t>(rt.rank())].emplace(p.name + ".grad", p.tensor.grad().clone());
      out[static_cast<size_t>(rt.rank())].emplace(p.name, p.tensor.detach().clone());
    }
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  return out;
}

std::vector<Grads> tiny_replicated(CheckpointMode mode, int64_t* overlapped) {
  std::vector<Grads> out(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    TinyModel model;
    std::vector<sdk::NamedParameter> params;
    for (const auto& item : model.named_parameters()) params.push_back({item.key(), item.value()});
    parallel::ReplicatedModel replicated(model, rt.dp(), params, 1);
    const auto ac = checkpointing(model, mode);
    tiny_loss(replicated.forward(tiny_tokens(rt.rank())), rt.rank()).backward();
    replicated.sync();
    for (const auto& p : params) out[static_cast<size_t>(rt.rank())].emplace(p.name, p.tensor.grad().clone());
    if (rt.rank() == 0) *overlapped = replicated.overlapped_blocks();
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  return out;
}

std::vector<Grads> transformer_fsdp(const std::string& toml, CheckpointMode mode) {
  std::vector<std::shared_ptr<sdk::Model>> models;
  for (int rank = 0; rank < 2; ++rank) {
    at::manual_seed(5);  // identical on both ranks, built before the threads share the global generator
    models.push_back(models::build_model(toml));
  }
  std::vector<Grads> out(2);
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    sdk::Model& model = *models[static_cast<size_t>(rt.rank())];
    const dist::Group no_replicas;
    parallel::FullyShardedModel fsdp(model, rt.dp(), no_replicas);
    const auto ac = checkpointing(model, mode);
    const at::Tensor tokens = at::arange(34, at::kLong).add(rt.rank() * 5).remainder(64).view({2, 17});
    at::Tensor loss = at::cross_entropy_loss(fsdp.forward(tokens.narrow(1, 0, 16)).reshape({-1, 64}),
                                             tokens.narrow(1, 1, 16).reshape({-1}));
    for (const auto& [name, aux] : model.auxiliary_losses()) loss = loss + aux;
    loss.backward();
    fsdp.finish_backward();
    for (const auto& p : fsdp.shards()) {
      if (p.tensor.grad().defined())
        out[static_cast<size_t>(rt.rank())].emplace(p.name + ".grad", p.tensor.grad().clone());
      out[static_cast<size_t>(rt.rank())].emplace(p.name, p.tensor.detach().clone());
    }
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  return out;
}

void expect_same_grads(const std::vector<Grads>& got, const std::vector<Grads>& want, const std::string& what) {
  for (size_t rank = 0; rank < 2; ++rank) {
    ASSERT_EQ(got[rank].size(), want[rank].size()) << what;
    for (const auto& [name, t] : want[rank]) {
      EXPECT_TRUE(at::equal(got[rank].at(name), t)) << what << ": " << name << " on rank " << rank;
    }
  }
}

TEST(ActivationCheckpointing, FullyShardedAndDataParallelEqualNoneOnTwoRanks) {
  const auto fsdp_none = tiny_fsdp(CheckpointMode::none, 2);
  expect_same_grads(tiny_fsdp(CheckpointMode::full, 2), fsdp_none, "tiny FSDP, full, 2 micro-batches");
  int64_t overlapped_none = 0, overlapped_full = 0;
  const auto dp_none = tiny_replicated(CheckpointMode::none, &overlapped_none);
  expect_same_grads(tiny_replicated(CheckpointMode::full, &overlapped_full), dp_none, "tiny DP, full");
  EXPECT_EQ(overlapped_full, 3);  // each block's all-reduce still starts in the backward, once
  EXPECT_EQ(overlapped_none, 3);
  const auto moe_none = transformer_fsdp(kMoESigmoid, CheckpointMode::none);
  expect_same_grads(transformer_fsdp(kMoESigmoid, CheckpointMode::full), moe_none, "MoE FSDP, full");
  expect_same_grads(transformer_fsdp(kMoESigmoid, CheckpointMode::selective), moe_none, "MoE FSDP, selective");
}

// The whole loop through the config key: three steps of two micro-batches of an MoE job with the sigmoid router.
TEST(ActivationCheckpointing, TrainingThroughTheConfigKeyGivesTheLossesOfNone) {
  std::map<std::string, std::map<int64_t, double>> losses;
  for (const std::string mode : {"none", "full", "selective"}) {
    TrainFixture fx;
    auto rec = std::make_shared<RecordingHook>();
    fx.run({"--train.max_steps=3", "--train.grad_accum_steps=2", "--train.activation_checkpointing=\"" + mode + "\"",
            "--model.num_experts=4", "--model.moe_top_k=2", "--model.moe_router=sigmoid_topk",
            "--model.moe_aux_loss_weight=0.01", "--model.moe_router_z_loss_weight=0.001"},
           {rec});
    losses[mode] = rec->losses;
  }
  ASSERT_EQ(losses["none"].size(), 3u);
  EXPECT_EQ(losses["full"], losses["none"]);
  EXPECT_EQ(losses["selective"], losses["none"]);
}

// Two processes through `kforge launch`, FSDP over dp_shard = 2, the MoE job: full's losses are none's.
TEST(ActivationCheckpointing, TwoRankFsdpJobThroughKforgeLaunchGivesTheLossesOfNone) {
  std::map<std::string, std::map<int64_t, double>> losses;
  for (const std::string mode : {"none", "full"}) {
    TrainFixture fx;
    launch(fx, 2,  // a shell command: the quotes keep "none" a string
           {"--train.max_steps=4", "--distributed.dp_shard=2", "--eval.enabled=false",
            "'--train.activation_checkpointing=\"" + mode + "\"'", "--model.num_experts=4", "--model.moe_top_k=2",
            "--model.moe_router=sigmoid_topk", "--model.moe_aux_loss_weight=0.01"});
    losses[mode] = metric(fx, "train/loss");
  }
  ASSERT_EQ(losses["none"].size(), 4u);
  EXPECT_EQ(losses["full"], losses["none"]);
}

}  // namespace
}  // namespace kforge::test
