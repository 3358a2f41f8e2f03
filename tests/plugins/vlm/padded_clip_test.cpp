// Clips of frames through the strategies (VisionLanguageParts::frames, set_images with a frame mask): a clip padded to
// more frames gives its text the logits and every parameter the gradient of the same clip unpadded (joint_decoder: the
// padding is a document of its own before the real frames; cross_attention: padded keys are masked), a clip without
// a real frame gives finite logits and gradients, and what the strategies refuse.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "strategy_oracle.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

constexpr int64_t kText = 6;

// A bool frame mask [rows, values / rows] of 0/1 values.
at::Tensor frame_mask(std::vector<int64_t> values, int64_t rows) {
  return at::tensor(values, at::kLong).to(at::kBool).view({rows, -1});
}

// Loss of row 0's text (a fixed target per position) and every parameter's gradient, of `vlm` over `pixels`.
struct ClipRun {
  at::Tensor logits;
  std::map<std::string, at::Tensor> grads;
};

ClipRun run_clip(sdk::VisionLanguageModel& vlm, const at::Tensor& pixels, const at::Tensor& mask) {
  vlm.zero_grad();
  vlm.set_images(pixels, mask);
  const at::Tensor tokens = at::arange(kText, at::kLong).unsqueeze(0).expand({pixels.size(0), kText}).contiguous();
  const at::Tensor logits = vlm.forward(tokens);
  const at::Tensor targets = (at::arange(kText, at::kLong) * 5 + 3).remainder(23);
  at::cross_entropy_loss(logits[0], targets).backward();
  ClipRun out{logits.detach(), {}};
  for (const auto& item : vlm.named_parameters(/*recurse=*/true)) {
    const at::Tensor g = item.value().grad();
    out.grads.emplace(item.key(), g.defined() ? g.clone() : at::zeros_like(item.value()));
  }
  return out;
}

// Two real frames padded to four (row 0) beside a clip of four (row 1), against the same two frames as a clip of two.
void expect_padding_changes_nothing(const std::string& arch, const std::string& vlm_keys) {
  const ComponentHost h(strategy_toml(arch, "", vlm_keys));
  const BuiltStrategy padded = build_strategy(h, 4), whole = build_strategy(h, 2);
  {
    at::NoGradGuard no_grad;
    auto from = padded.vlm->named_parameters(/*recurse=*/true);
    for (auto& item : whole.vlm->named_parameters(/*recurse=*/true)) item.value().copy_(from[item.key()]);
  }
  at::manual_seed(3);
  const at::Tensor frames = at::rand({2, 4, 3, 8, 8});
  at::Tensor pixels = frames.clone();
  pixels[0].narrow(0, 2, 2).zero_();
  const at::Tensor mask = frame_mask({1, 1, 0, 0, 1, 1, 1, 1}, 2);
  const ClipRun a = run_clip(*padded.vlm, pixels, mask);
  const ClipRun b = run_clip(*whole.vlm, frames[0].narrow(0, 0, 2).unsqueeze(0), at::ones({1, 2}, at::kBool));
  // The same sums in another order (more, masked, keys): fp32 rounding of values near 1.
  EXPECT_TRUE(at::allclose(a.logits[0], b.logits[0], 1e-4, 1e-5))
      << arch << ": " << (a.logits[0] - b.logits[0]).abs().max();
  ASSERT_EQ(a.grads.size(), b.grads.size());
  for (const auto& [name, g] : b.grads) {
    EXPECT_TRUE(at::allclose(a.grads.at(name), g, 1e-4, 1e-5))
        << arch << " " << name << ": " << (a.grads.at(name) - g).abs().max();
  }
  // A clip without a real frame (one that could not be decoded): finite outputs and gradients.
  const ClipRun none = run_clip(*padded.vlm, at::zeros({1, 4, 3, 8, 8}), at::zeros({1, 4}, at::kBool));
  EXPECT_TRUE(at::isfinite(none.logits).all().item<bool>()) << arch;
  for (const auto& [name, g] : none.grads) EXPECT_TRUE(at::isfinite(g).all().item<bool>()) << arch << " " << name;
}

TEST(PaddedClip, JointDecoderTextSeesThePaddedClipAsTheUnpaddedOne) {
  expect_padding_changes_nothing("joint_decoder", "");
}

TEST(PaddedClip, CrossAttentionTextSeesThePaddedClipAsTheUnpaddedOne) {
  expect_padding_changes_nothing("cross_attention", "cross_attention_every_n_layers = 1\n");
}

TEST(PaddedClip, ClipsOfTheWrongShapeOrMaskAreRefused) {
  const ComponentHost h(strategy_toml("joint_decoder"));
  const BuiltStrategy b = build_strategy(h, 4);
  expect_has(
      error_of([&] {
        b.vlm->set_images(at::rand({1, 3, 3, 8, 8}));
      }),
      {"joint_decoder: clips must be a floating tensor [batch, 4 frames, channels, height, width]", "[1, 3, 3, 8, 8]"});
  expect_has(error_of([&] {
               b.vlm->set_images(at::rand({1, 4, 3, 8, 8}), at::ones({1, 3}, at::kBool));
             }),
             {"a frame mask must be bool [batch, frames]"});
  expect_has(error_of([&] {
               b.vlm->set_images(at::rand({1, 4, 3, 8, 8}), frame_mask({0, 1, 1, 1}, 1));
             }),
             {"real frames first, then its padding"});
  const BuiltStrategy image = build_strategy(h);
  expect_has(error_of([&] {
               image.vlm->set_images(at::rand({1, 3, 8, 8}), at::ones({1, 1}, at::kBool));
             }),
             {"a frame mask must be bool [batch, frames] beside clips"});
}

// MoT and MoMa refuse clips (their per-modality positions and routing do not mask padding yet), naming the key.
TEST(PaddedClip, StrategiesWithTheirOwnStackRefuseClips) {
  for (const std::string arch : {"mot", "moma"}) {
    const ComponentHost h(strategy_toml(arch));
    expect_has(config_error_of([&] { build_strategy(h, 2); }),
               {"[vlm] arch = \"" + arch + "\" with clips of 2 frames ([video])", "joint_decoder"});
    EXPECT_NO_THROW(build_strategy(h, 1));
  }
}

}  // namespace
}  // namespace kforge::test
