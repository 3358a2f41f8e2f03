// Padded clips of different lengths through each strategy: the siglip2 tower, the mlp_2layer adapter and the sinusoidal
// time embedding, then joint_decoder, cross_attention, mot or moma; the loss, logits and every parameter's gradient
// match tests/oracles/video_clips.py (float64, which drops the padding and runs the rows as they are), and the same
// clips padded to 4 and to 6 frames give the same loss.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "strategy_oracle.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

constexpr int64_t kClipRows = 3, kClipText = 6, kClipVocab = 23;
const std::vector<int64_t> kRealFrames = {4, 2, 1};
// A tower weight, an adapter weight and the time embedding's: their gradients must not be zero.
const char* const kNamedGradients[] = {"vision_encoder.vision_model.embeddings.patch_embedding.weight",
                                       "adapter.proj1.weight", "time_embedding.proj.weight"};

// The bound on |fp32 - float64| relative to a value's scale. A sum of n fp32 terms, in any order, is off by at most
// n u times the sum of their magnitudes (u = 2^-24); a value that runs through a chain of such sums, each of gain
// about 1 (normalised activations, weights of scale 1 / sqrt(fan-in)), carries the sum of their lengths times u,
// relative to its scale. The longest chain here, forward, in sums' lengths:
// - the tower, 116: the patch embedding 3 x 4 x 4 = 48; in its layer the norms 8 + 8, q/k/v 8, the scores 4 (head
//   dim), softmax and weighted sum over 4 tokens 4, out 8, fc1 8, fc2 12; the post norm 8;
// - the adapter, 24: proj1 8, proj2 16;
// - the time embedding, 132: its projection of 2 x 16 features 32; its angles 2 pi t / p, rounded in fp32 at up to
//   4 s x 2 pi / 0.5 s = 50 rad, are off by up to 2 x 50 u, on features of scale 1: 100;
// - each of the 2 layers of the stack, 146: norm 16, q/k/v 16, scores 4, softmax and weighted sum over up to 24 + 6
//   positions 30, o_proj 16, norm 16, gate/up 16, down 32 (MoMa's expert width; the FFN's is 24);
// - the head, 73: norm 16, projection 16, softmax over the vocabulary 23, mean over 3 x 6 targets 18.
// That is 637; the backward runs the same chain back, then sums a weight's gradient over the positions that share it
// (at most 3 rows x (24 + 6) = 90): 2 x 637 + 90 = 1364.
const double kBound = 1364 * std::ldexp(1.0, -24);

// The [video] and [time_embedding] of the clips: up to 6 frames, the sinusoidal embedding at its defaults (16 bands,
// 0.5 to 256 s); [model] takes an FFN of 24 (MoMa's experts: 32) to keep the chain short.
std::string clip_toml(const std::string& arch, const std::string& vlm_keys) {
  return strategy_toml(arch, "ffn_hidden_dim = 24\n", vlm_keys) +
         "[video]\nmax_frames = 6\nmin_frames = 1\n[time_embedding]\ntype = \"sinusoidal\"\n";
}

// Clips of kRealFrames real frames padded to 6 (the padding's pixels and times far out of the real ones' range),
// tokens and targets; narrowed(4) gives the same clips padded to 4.
struct ClipBatch {
  at::Tensor clips, mask, times, tokens, targets;

  ClipBatch narrowed(int64_t frames) const {
    return {clips.narrow(1, 0, frames).contiguous(), mask.narrow(1, 0, frames).contiguous(),
            times.narrow(1, 0, frames).contiguous(), tokens, targets};
  }
};

ClipBatch clip_batch() {
  ClipBatch b;
  const at::Tensor real = at::tensor(kRealFrames, at::kLong).unsqueeze(1);
  b.mask = at::arange(6, at::kLong).unsqueeze(0).lt(real);
  const at::Tensor padding = b.mask.logical_not().view({kClipRows, 6, 1, 1, 1});
  b.clips = at::where(padding, at::rand({kClipRows, 6, 3, 8, 8}) * 8 - 4, at::rand({kClipRows, 6, 3, 8, 8}) * 2 - 1);
  b.times = at::where(b.mask, at::rand({kClipRows, 6}) * 4, at::full({kClipRows, 6}, 1000.0F));
  b.tokens = at::randint(0, kClipVocab, {kClipRows, kClipText}, at::kLong);
  b.targets = at::randint(0, kClipVocab, {kClipRows, kClipText}, at::kLong);
  return b;
}

// The loss, logits and every parameter's gradient of `vlm` over the batch.
struct ClipPass {
  at::Tensor loss, logits;
  std::map<std::string, at::Tensor> grads;
};

ClipPass run_clip_pass(sdk::VisionLanguageModel& vlm, const ClipBatch& b) {
  vlm.zero_grad();
  vlm.set_images(b.clips, b.mask, b.times);
  const at::Tensor logits = vlm.forward(b.tokens);
  const at::Tensor loss = at::cross_entropy_loss(logits.reshape({-1, kClipVocab}), b.targets.reshape({-1}));
  loss.backward();
  ClipPass out{loss.detach().reshape({1}), logits.detach(), {}};
  for (const auto& item : vlm.named_parameters(/*recurse=*/true)) {
    const at::Tensor g = item.value().grad();
    out.grads.emplace(item.key(), g.defined() ? g.clone() : at::zeros_like(item.value()));
  }
  return out;
}

// |actual - expected| <= kBound times `scale`, the magnitude of the terms its sums add.
void expect_within_bound(const at::Tensor& actual, const at::Tensor& expected, double scale, const std::string& what) {
  expect_within(actual, expected, what, kBound * scale, 0.0);
}

// The module of a parameter: its name without the last part ("adapter.proj1" of "adapter.proj1.bias").
std::string module_of(const std::string& name) { return name.substr(0, name.rfind('.')); }

// The scale of each gradient's sums: the largest magnitude among the oracle's gradients of its module's parameters.
// A bias's gradient sums the terms its weight's does, less the inputs (of scale 1, normalised): a key projection's
// bias has an exact 0 of a gradient in float64 (softmax ignores a shift of all the scores it is given), which fp32
// reaches as a sum of terms of its weight's gradient's size.
std::map<std::string, double> gradient_scales(const std::map<std::string, at::Tensor>& expected) {
  std::map<std::string, double> module_scale, out;
  for (const auto& [name, grad] : expected) {
    double& scale = module_scale[module_of(name)];
    scale = std::max(scale, grad.abs().max().item<double>());
  }
  for (const auto& [name, grad] : expected) out.emplace(name, module_scale.at(module_of(name)));
  return out;
}

// Runs `arch` over clip_batch() padded to 4 and to 6 frames, the stack and the time embedding's projection given
// random weights, against video_clips.py given the clips padded to 4; `strategy_json` is the oracle's member for the
// strategy's own keys. Returns the oracle's directory (the caller removes it) for what a strategy's test reads more.
std::filesystem::path expect_clips_match_oracle(const std::string& arch, const std::string& vlm_keys,
                                                const std::string& strategy_json, uint64_t seed) {
  SCOPED_TRACE(arch);
  EXPECT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  torch::manual_seed(seed);
  const ComponentHost h(clip_toml(arch, vlm_keys));
  const BuiltStrategy four = build_strategy(h, 4), six = build_strategy(h, 6);
  randomise_stack(*four.vlm);
  auto params = four.vlm->named_parameters(/*recurse=*/true);
  {
    at::NoGradGuard no_grad;
    params["time_embedding.proj.weight"].normal_(0.0, 0.5);
    auto to = six.vlm->named_parameters(/*recurse=*/true);
    EXPECT_EQ(to.size(), params.size());
    for (auto& item : to) item.value().copy_(params[item.key()]);
  }
  const ClipBatch batch6 = clip_batch(), batch4 = batch6.narrowed(4);

  const auto dir = temp_dir("oracle_video_" + arch);
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, at::Tensor>>{{"clips", batch4.clips},
                                                       {"frame_mask", batch4.mask.to(at::kLong)},
                                                       {"frame_times", batch4.times},
                                                       {"tokens", batch4.tokens},
                                                       {"targets", batch4.targets}}) {
    write_npy(dir / (name + ".npy"), value);
  }
  for (const auto& p : params) write_npy(dir / (p.key() + ".npy"), p.value().detach());
  std::ofstream(dir / "config.json")
      << R"({"strategy": ")" << arch << R"(", )" << parts_json(h.job.view("model"))
      << R"(, "time_embedding": {"num_bands": 16, "min_period": 0.5, "max_period": 256.0})"
      << (strategy_json.empty() ? "" : ", ") << strategy_json << "}";
  std::string out;
  EXPECT_EQ(run_oracle("video_clips.py", {dir.string()}, &out), 0) << out;

  const ClipPass run4 = run_clip_pass(*four.vlm, batch4), run6 = run_clip_pass(*six.vlm, batch6);
  const at::Tensor loss = read_npy(dir / "loss.npy"), logits = read_npy(dir / "logits.npy");
  std::map<std::string, at::Tensor> grads;
  for (const auto& p : params) grads.emplace(p.key(), read_npy(dir / ("grad." + p.key() + ".npy")));
  const std::map<std::string, double> scales = gradient_scales(grads);
  for (const auto& [frames, run] : {std::pair<int, const ClipPass*>{4, &run4}, {6, &run6}}) {
    const std::string padded = " (padded to " + std::to_string(frames) + " frames)";
    expect_within_bound(run->loss, loss, loss.item<double>(), "loss" + padded);
    expect_within_bound(run->logits, logits, logits.abs().max().item<double>(), "logits" + padded);
    for (const auto& [name, grad] : run->grads)
      expect_within_bound(grad, grads.at(name), scales.at(name), name + padded);
  }
  // Both within kBound of the reference: within twice that of each other.
  EXPECT_LE(std::abs(run4.loss.item<double>() - run6.loss.item<double>()), 2 * kBound * loss.item<double>())
      << run4.loss.item<double>() << " padded to 4 frames, " << run6.loss.item<double>() << " padded to 6";
  for (const char* name : kNamedGradients) {
    const auto it = grads.find(name);
    EXPECT_TRUE(it != grads.end() && it->second.abs().max().item<double>() > 0.0) << name << ": absent or all 0";
  }
  return dir;
}

TEST(VideoOracle, JointDecoderOverPaddedClipsMatchesTheReference) {
  std::filesystem::remove_all(expect_clips_match_oracle("joint_decoder", "", "", 21));
}

TEST(VideoOracle, CrossAttentionOverPaddedClipsMatchesTheReference) {
  std::filesystem::remove_all(expect_clips_match_oracle(
      "cross_attention",
      "cross_attention_every_n_layers = 1\ncross_attention_n_heads = 4\ncross_attention_n_kv_heads = 2\n",
      R"("cross_attention": {"every": 1, "n_heads": 4, "n_kv_heads": 2})", 22));
}

TEST(VideoOracle, MotOverPaddedClipsMatchesTheReference) {
  std::filesystem::remove_all(expect_clips_match_oracle("mot", "", "", 23));
}

// Expert choice is a discontinuous pick: the comparison holds only when no expert's choice is within the fp32 scores'
// error of a tie (scores of scale 1 off by at most kBound each, so a gap over 2 kBound cannot flip).
TEST(VideoOracle, MomaOverPaddedClipsMatchesTheReference) {
  const auto dir =
      expect_clips_match_oracle("moma", "moma_gumbel_noise = false\n", R"("moma": {"capacity_factor": 0.0})", 24);
  EXPECT_GT(read_npy(dir / "routing_margin.npy").item<double>(), 2 * kBound) << "an expert's choice is a near tie";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kforge::test
