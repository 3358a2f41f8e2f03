// Pipeline parallelism ([distributed] pp): the built-in schedules' orders (well-formed, deadlock-free, their bubble
// against the theory), the split of blocks over stages, each stage's per-parameter gradients against the whole
// model's (two thread ranks), and real jobs through `kforge launch` on 127.0.0.1 against one
// rank: each schedule, pp x dp_shard, pp x tp, checkpoints that resume on other layouts, a killed stage, the
// refusals, and KempnerForge's pipeline presets scaled to four ranks.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>

#include "core/train/scaled_preset.h"
#include "core/train/train_fixture.h"
#include "kforge/sdk/error.h"
#include "parallel/pipeline_order.h"
#include "parallel/stage_link.h"
#include "parallel/stage_model.h"
#include "parallel/stage_split.h"
#include "schedules/gpipe.h"
#include "schedules/interleaved_one_f_one_b.h"
#include "schedules/one_f_one_b.h"
#include "support/launch_job.h"
#include "support/max_abs_diff.h"
#include "support/precision_parity.h"
#include "support/same_checkpoint.h"
#include "support/two_ranks.h"
#include "transformer/transformer.h"

namespace kforge::test {
namespace {

using builtin::schedules::GPipe;
using builtin::schedules::InterleavedOneFOneB;
using builtin::schedules::OneFOneB;

std::vector<std::vector<sdk::PipelinePass>> orders_of(const sdk::PipelineSchedule& schedule, int ranks, int micro) {
  std::vector<std::vector<sdk::PipelinePass>> out;
  for (int r = 0; r < ranks; ++r) out.push_back(schedule.order(ranks, r, micro));
  return out;
}

// The most micro-batches whose activations a rank holds at once (forwards run, backwards not yet).
int most_in_flight(const std::vector<sdk::PipelinePass>& order) {
  int now = 0, most = 0;
  for (const sdk::PipelinePass& p : order) most = std::max(most, now += p.forward ? 1 : -1);
  return most;
}

// GPipe and 1F1B leave the bubble (p - 1) / (m + p - 1) whatever the backward costs; 1F1B holds at most p - r
// micro-batches on rank r where GPipe holds all m.
TEST(PipelineSchedules, GpipeAndOneFOneBLeaveTheTheoreticalBubble) {
  for (const int ranks : {2, 4}) {
    for (const int micro : {4, 8}) {
      SCOPED_TRACE(fmt::format("pp = {}, {} micro-batches", ranks, micro));
      const double theory = (ranks - 1.0) / (micro + ranks - 1.0);
      EXPECT_NEAR(parallel::check_pipeline_orders(orders_of(GPipe(), ranks, micro), 1, micro, "gpipe"), theory, 1e-12);
      const auto one_f_one_b = orders_of(OneFOneB(), ranks, micro);
      EXPECT_NEAR(parallel::check_pipeline_orders(one_f_one_b, 1, micro, "1f1b"), theory, 1e-12);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(most_in_flight(one_f_one_b[static_cast<size_t>(r)]), std::min(ranks - r, micro)) << "rank " << r;
        EXPECT_EQ(most_in_flight(GPipe().order(ranks, r, micro)), micro) << "rank " << r;
      }
    }
  }
}

// Interleaving v chunks per rank shrinks the bubble towards (p - 1) / (v m + p - 1), below 1F1B's.
TEST(PipelineSchedules, InterleavedOneFOneBShrinksTheBubbleByItsChunks) {
  for (const int ranks : {2, 4}) {
    for (const int chunks : {2, 3}) {
      const int micro = 2 * ranks;
      SCOPED_TRACE(fmt::format("pp = {}, {} chunks, {} micro-batches", ranks, chunks, micro));
      const double bubble = parallel::check_pipeline_orders(orders_of(InterleavedOneFOneB(chunks), ranks, micro),
                                                            chunks, micro, "interleaved_1f1b");
      const double one_f_one_b = (ranks - 1.0) / (micro + ranks - 1.0);
      EXPECT_LT(bubble, one_f_one_b);
      EXPECT_GE(bubble, (ranks - 1.0) / (chunks * micro + ranks - 1.0) - 1e-12);
    }
  }
}

// Too few micro-batches for the schedule are refused naming the keys; a malformed or deadlocking order names the rank
// and the pass.
TEST(PipelineSchedules, RefuseTooFewMicroBatchesAndOrdersThatCannotRun) {
  try {
    OneFOneB().order(4, 0, 2);
    ADD_FAILURE() << "1f1b ordered 2 micro-batches over 4 stages";
  } catch (const sdk::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("[train] grad_accum_steps = 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(InterleavedOneFOneB(2).order(2, 0, 3), sdk::ConfigError);  // not a multiple of pp
  EXPECT_THROW(InterleavedOneFOneB(0), sdk::ConfigError);
  EXPECT_THROW(InterleavedOneFOneB(InterleavedOneFOneB::kMaxVirtualStages + 1), sdk::ConfigError);
  EXPECT_NO_THROW(GPipe().order(4, 0, 1));                                // GPipe runs any count
  using P = sdk::PipelinePass;
  // Rank 0 waits for micro-batch 0's gradient before sending micro-batch 1's input; rank 1 wants micro-batch 1 first.
  const std::vector<std::vector<P>> deadlock = {{{true, 0, 0}, {false, 0, 0}, {true, 0, 1}, {false, 0, 1}},
                                                {{true, 0, 1}, {false, 0, 1}, {true, 0, 0}, {false, 0, 0}}};
  try {
    parallel::check_pipeline_orders(deadlock, 1, 2, "mine");
    ADD_FAILURE() << "the deadlock went unseen";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("waits forever"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pp_schedule"), std::string::npos) << e.what();
  }
  const std::vector<std::vector<P>> backward_first = {{{false, 0, 0}, {true, 0, 0}}};
  EXPECT_THROW(parallel::check_pipeline_orders(backward_first, 1, 1, "mine"), sdk::Error);
  const std::vector<std::vector<P>> missing = {{{true, 0, 0}, {false, 0, 0}}};
  EXPECT_THROW(parallel::check_pipeline_orders(missing, 1, 2, "mine"), sdk::Error);
}

// Even splits give earlier stages the remainder; a given split must cover every block with positive counts.
TEST(StageSplit, EvenSplitsGiveEarlierStagesTheRemainderAndGivenSplitsAreChecked) {
  EXPECT_EQ(parallel::split_stages(7, 3, {}).first, (std::vector<int64_t>{0, 3, 5, 7}));
  EXPECT_EQ(parallel::split_stages(8, 4, {}).first, (std::vector<int64_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(parallel::split_stages(6, 2, {1, 5}).first, (std::vector<int64_t>{0, 1, 6}));
  EXPECT_EQ(parallel::split_stages(7, 3, {}).describe(), "0-2 | 3-4 | 5-6");
  EXPECT_THROW(parallel::split_stages(2, 4, {}), sdk::ConfigError);
  EXPECT_THROW(parallel::split_stages(6, 2, {2, 3}), sdk::ConfigError);
  EXPECT_THROW(parallel::split_stages(6, 2, {0, 6}), sdk::ConfigError);
  EXPECT_THROW(parallel::split_stages(6, 3, {3, 3}), sdk::ConfigError);
}

// A four-block float64 transformer, built alike (seed 7) on every thread.
std::shared_ptr<builtin::models::Transformer> seeded_four_blocks() {
  builtin::models::ModelConfig c;
  c.dim = 32;
  c.n_layers = 4;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.vocab_size = 48;
  c.max_seq_len = 16;
  static std::mutex draws;  // the rank threads share the global generator: one seeds and draws at a time
  const std::lock_guard<std::mutex> lock(draws);
  at::manual_seed(7);
  auto model = std::make_shared<builtin::models::Transformer>(c);
  model->to(at::kDouble);
  return model;
}

// Micro-batch m's loss out of `micro` micro-batches: a fixed linear function of its logits.
at::Tensor probe_loss(const at::Tensor& logits, const at::Tensor& probe, int micro) {
  return (logits * probe).sum() / micro;
}

// Per-parameter gradients on two thread ranks: the model split into stages (StageModel), driven through each
// schedule's order with the stages' transfers (StageLink) as Pipeline::run drives them, four micro-batches. Every
// parameter is trained on exactly one rank, and its gradient there is the whole model's over the same micro-batches.
// Each micro-batch's gradient is the same float64 operations in the same order (the transfers carry the bytes); only
// the order in which the micro-batches' gradients are added differs by schedule, which moves a sum of n terms by at
// most 2 (n - 1) u times the sum of their magnitudes (u = 2^-53).
TEST(PipelineStages, EachParameterGetsTheWholeModelsGradientOnTheOneRankThatTrainsIt) {
  constexpr int kMicro = 4, kRanks = 2;
  at::manual_seed(11);
  std::vector<at::Tensor> tokens, probes;
  for (int m = 0; m < kMicro; ++m) {
    tokens.push_back(at::randint(48, {2, 8}, at::kLong));
    probes.push_back(at::randn({2, 8, 48}, at::kDouble));
  }
  const auto whole = seeded_four_blocks();
  std::map<std::string, at::Tensor> expected, magnitude;
  for (int m = 0; m < kMicro; ++m) {
    whole->zero_grad();
    probe_loss(whole->forward(tokens[m]), probes[m], kMicro).backward();
    for (const auto& item : whole->named_parameters(true)) {
      const at::Tensor g = item.value().grad();
      expected[item.key()] = m == 0 ? g.clone() : expected[item.key()] + g;
      magnitude[item.key()] = m == 0 ? g.abs() : magnitude[item.key()] + g.abs();
    }
  }
  const double bound = 2 * (kMicro - 1) * std::ldexp(1.0, -53);
  const std::vector<std::shared_ptr<sdk::PipelineSchedule>> schedules = {
      std::make_shared<GPipe>(), std::make_shared<OneFOneB>(), std::make_shared<InterleavedOneFOneB>(2)};
  for (const auto& schedule : schedules) {
    const int stages = kRanks * schedule->chunks();
    SCOPED_TRACE(fmt::format("{} virtual stages", stages));
    std::vector<std::map<std::string, at::Tensor>> got(kRanks);
    const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
      const int rank = rt.rank();
      parallel::StageModel stage(seeded_four_blocks(), parallel::split_stages(4, stages, {}), kRanks, rank);
      parallel::StageLink link(rt.world(), stages);
      std::vector<at::Tensor> inputs(static_cast<size_t>(schedule->chunks() * kMicro)), outputs(inputs.size());
      for (const sdk::PipelinePass& pass : schedule->order(kRanks, rank, kMicro)) {
        const int v = pass.chunk * kRanks + rank, m = pass.micro_batch;
        const auto k = static_cast<size_t>(pass.chunk * kMicro + m);
        if (pass.forward) {
          inputs[k] = v > 0 ? link.receive_input(v, m, tokens[m].sizes()) : at::Tensor();
          stage.set_pass(pass.chunk, inputs[k]);
          outputs[k] = stage.forward(tokens[m]);
          if (v + 1 == stages) {
            outputs[k] = probe_loss(outputs[k], probes[m], kMicro);
          } else {
            link.send_output(v, m, outputs[k], tokens[m].sizes());
          }
        } else {
          if (v + 1 < stages) {
            torch::autograd::backward({outputs[k]}, {link.receive_output_gradient(v, m, outputs[k])});
          } else {
            outputs[k].backward();
          }
          if (v > 0) link.send_input_gradient(v, m, inputs[k].grad());
        }
      }
      link.finish();
      auto& mine = got[static_cast<size_t>(rank)];
      for (const auto& item : stage.named_parameters(true)) mine[item.key()] = item.value().grad();
    });
    ASSERT_EQ(errors, (std::vector<std::string>{"", ""}));
    for (const auto& [name, want] : expected) {
      const int holders = static_cast<int>(got[0].count(name) + got[1].count(name));
      ASSERT_EQ(holders, 1) << name << " is trained on " << holders << " ranks";
      const at::Tensor& g = got[0].count(name) ? got[0].at(name) : got[1].at(name);
      ASSERT_TRUE(g.defined()) << name << " got no gradient";
      EXPECT_TRUE(((g - want).abs() <= magnitude.at(name) * bound).all().item<bool>())
          << name << ": max |stage - whole| = " << max_abs_diff(g, want);
    }
  }
}

// Four blocks and four micro-batches per step: enough for two stages of two chunks each.
const std::vector<std::string> kPipelined = {"--model.n_layers=4", "--train.grad_accum_steps=4"};

// 20 steps at pp = 2 against one rank with the same micro-batches, with each schedule (interleaved 1F1B over two
// chunks per rank, so four virtual stages of one block), and 1F1B with its blocks recomputed in the backward; the
// evaluations every 5 steps run through the stages too (compared within the precision's steps). In fp32, under bf16
// autocast and in fp16 (their parity: support/precision_parity.h).
class PipelineParallelAt : public ::testing::TestWithParam<Precision> {};
INSTANTIATE_TEST_SUITE_P(Precisions, PipelineParallelAt, ::testing::ValuesIn(parity_precisions()), precision_name);

TEST_P(PipelineParallelAt, TwoStagesMatchOneRankWithEverySchedule) {
  const Precision& p = GetParam();
  const auto args = with(with(kPipelined, {"--train.max_steps=20", "--eval.enabled=true"}), p.overrides);
  TrainFixture one;
  launch(one, 1, args);
  const std::vector<std::vector<std::string>> variants = {
      {"--distributed.pp_schedule=gpipe"},
      {"--distributed.pp_schedule=1f1b"},
      {"--distributed.pp_schedule=interleaved_1f1b", "--distributed.virtual_stages=2"},
      {"--distributed.pp_schedule=1f1b", "'--train.activation_checkpointing=\"full\"'"}};
  for (const auto& variant : variants) {
    SCOPED_TRACE(fmt::format("{}", fmt::join(variant, " ")));
    TrainFixture two;
    std::string output;
    ASSERT_EQ(launch(two, 2, with(with(args, {"--distributed.pp=2"}), variant), &output), 0) << output;
    EXPECT_NE(output.find("[distributed] pp = 2"), std::string::npos) << output;
    expect_parity(two, one, p);
    for (int64_t step = 5; step <= p.last_step; step += 5) {
      expect_close(metric(two, "eval/loss"), metric(one, "eval/loss"), step, step, p.loss_tolerance);
    }
    const auto bubble = metric(two, "pp/bubble");
    ASSERT_TRUE(bubble.count(20));
    EXPECT_GE(bubble.at(20), 0.0);
    EXPECT_LT(bubble.at(20), 1.0);
  }
}

// Four ranks: pp = 2 x dp_shard = 2 (FSDP inside each stage) and pp = 2 x tp = 2 (each stage's layers split), against
// one rank with the same global batch.
TEST(PipelineParallel, StagesTimesFsdpAndTimesTensorParallelOnFourRanksMatchOneRank) {
  const auto args = with(kPipelined, {"--train.max_steps=20"});
  TrainFixture one_wide, one;
  launch(one_wide, 1, with(args, {"--train.batch_size=8"}));
  launch(one, 1, args);
  TrainFixture fsdp, tensor;
  launch(fsdp, 4, with(args, {"--distributed.pp=2", "--distributed.dp_shard=2"}));
  expect_parity(fsdp, one_wide, 1, 20);
  launch(tensor, 4, with(args, {"--distributed.pp=2", "--distributed.tp=2", "--distributed.dp_shard=1"}));
  expect_parity(tensor, one, 1, 20);
}

// Written at pp = 2: the one-rank run's logical tensors; resumed at pp = 1, at pp = 2 x dp_shard = 2 and at pp = 4
// (one block per stage), the runs continue the one-rank run's losses; resumed at pp = 2 again, exactly the
// uninterrupted pp = 2 run's. And the one-rank run's checkpoint resumes at pp = 2.
TEST(PipelineParallel, CheckpointResumesOnOtherStageCountsAndExactlyOnTheSame) {
  const auto args = with(kPipelined, {"--scheduler.name=constant"});  // the 10-step run is the 20-step run's first half
  TrainFixture one, two, straight;
  launch(one, 1, with(args, {"--train.max_steps=20"}));
  launch(two, 2, with(args, {"--train.max_steps=10", "--distributed.pp=2"}));
  launch(straight, 2, with(args, {"--train.max_steps=20", "--distributed.pp=2"}));
  expect_same_logical_tensors(one.checkpoint_dir / "step_10", two.checkpoint_dir / "step_10", 1e-4,
                              kOptimizerStateTolerance);
  const std::string load = "--checkpoint.load_path=" + (two.checkpoint_dir / "step_10").string();
  struct Layout {
    int ranks;
    std::vector<std::string> args;
  };
  for (const Layout& layout :
       {Layout{1, {}}, Layout{4, {"--distributed.pp=2", "--distributed.dp_shard=2", "--train.batch_size=2"}},
        Layout{4, {"--distributed.pp=4", "--distributed.dp_shard=1"}}, Layout{2, {"--distributed.pp=2"}}}) {
    SCOPED_TRACE(fmt::format("resumed on {} ranks: {}", layout.ranks, fmt::join(layout.args, " ")));
    TrainFixture resumed;
    std::string output;
    ASSERT_EQ(launch(resumed, layout.ranks, with(with(args, {"--train.max_steps=20", load}), layout.args), &output), 0)
        << output;
    EXPECT_NE(output.find("resumed from step 10"), std::string::npos) << output;
    if (layout.args.size() == 1) {  // the same layout: bit-exact
      const auto loss = metric(resumed, "train/loss"), uninterrupted = metric(straight, "train/loss");
      for (int64_t step = 11; step <= 20; ++step) {
        ASSERT_TRUE(loss.count(step) && uninterrupted.count(step)) << "step " << step;
        EXPECT_EQ(loss.at(step), uninterrupted.at(step)) << "step " << step;
      }
    } else {
      expect_parity(resumed, one, 11, 20);
    }
  }
  TrainFixture split;
  launch(split, 2,
         with(args, {"--train.max_steps=20", "--distributed.pp=2",
                     "--checkpoint.load_path=" + (one.checkpoint_dir / "step_10").string()}));
  expect_parity(split, one, 11, 20);
}

// A stage killed mid-run ends the whole job at once: the launcher names the rank, which rank 0's log maps to its
// stage.
TEST(PipelineParallel, AKilledStageEndsTheJobNamingIt) {
  TrainFixture fx;
  std::string output;
  const int status = launch_and_kill_after_checkpoint(
      fx, 2,
      with(kPipelined, {"--distributed.pp=2", "--train.max_steps=2000", "--checkpoint.interval=5",
                        "--distributed.nccl_timeout_sec=60"}),
      1, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL) << output;
  EXPECT_NE(output.find("the job failed: rank 1 exited with code 137"), std::string::npos) << output;
  EXPECT_NE(output.find("pipeline stage 0 on rank 0, stage 1 on rank 1"), std::string::npos) << output;
}

// A stage that hangs (stopped mid-run) ends the job once the other stage's wait passes nccl_timeout_sec: the waiting
// rank fails naming itself, and the launcher ends the rest.
TEST(PipelineParallel, AHungStageEndsTheJobAfterTheTimeout) {
  TrainFixture fx;
  std::string output;
  const int status = signal_after_checkpoint(
      launch_command(fx, 2,
                     with(kPipelined, {"--distributed.pp=2", "--train.max_steps=2000", "--checkpoint.interval=5",
                                       "--distributed.nccl_timeout_sec=5"})),
      "kforge launch: rank 1 is pid %d", SIGSTOP, output);
  ASSERT_TRUE(WIFEXITED(status)) << output;
  EXPECT_NE(WEXITSTATUS(status), 0) << output;
  EXPECT_NE(output.find("failed on rank 0"), std::string::npos) << output;
  EXPECT_NE(output.find("nccl_timeout_sec = 5 s"), std::string::npos) << output;
}

// What pipeline parallelism cannot do is refused before training, naming the key.
TEST(PipelineParallel, RefusesTooFewMicroBatchesTiedEmbeddingsMoEAndMoreStagesThanBlocks) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--train.grad_accum_steps=1"}, "[train] grad_accum_steps = 1"},
      {{"--model.tie_embeddings=true"}, "Tied embeddings are not supported with pipeline parallelism"},
      {{"--model.num_experts=4"}, "MoE + Pipeline Parallelism is not supported"},
      {{"--model.n_layers=1"}, "only 1 blocks"}};
  for (const auto& [extra, message] : cases) {
    SCOPED_TRACE(message);
    TrainFixture fx;
    std::string output;
    EXPECT_NE(launch(fx, 2, with(with({"--distributed.pp=2", "--train.grad_accum_steps=2"}, extra), {}), &output), 0);
    EXPECT_NE(output.find(message), std::string::npos) << output;
  }
}

// KempnerForge's pipeline presets with their layout scaled to four ranks and a small shape: each trains here as
// written otherwise, and its loss falls.
TEST(PipelineParallel, ClusterPresetsScaledToFourRanksTrain) {
  expect_scaled_preset_trains("13b_32gpu_tp4_pp2", 4,
                              {"--distributed.pp=2", "--distributed.tp=2", "--distributed.dp_shard=1"}, 4);
  expect_scaled_preset_trains("29b_32gpu_tp4_pp2", 4,
                              {"--distributed.pp=2", "--distributed.tp=1", "--distributed.dp_shard=2"}, 4);
  expect_scaled_preset_trains("70b_32gpu_tp4_pp4", 4,
                              {"--distributed.pp=4", "--distributed.tp=1", "--distributed.dp_shard=1"}, 4);
}

}  // namespace
}  // namespace kforge::test
