// Clips of frames through the strategies (VisionLanguageParts::frames, set_images with a frame mask): a clip padded to
// more frames gives its text the logits and every parameter the gradient of the same clip unpadded (joint_decoder, mot
// and moma: the padding is a document of its own before the real frames, which moma's experts do not pick;
// cross_attention: padded keys are masked), a clip without a real frame gives finite logits and gradients, and what
// the strategies refuse.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
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

// Two real frames padded to four (row 0) beside a clip of four (row 1; none with rows = 1), against the same two frames
// as a clip of two, the stack's weights random (so no block is the identity, as MoT's are at construction).
void expect_padding_changes_nothing(const std::string& arch, const std::string& vlm_keys, int64_t rows = 2,
                                    const std::string& model_keys = "") {
  SCOPED_TRACE(arch + " " + model_keys);
  const ComponentHost h(strategy_toml(arch, model_keys, vlm_keys));
  const BuiltStrategy padded = build_strategy(h, 4), whole = build_strategy(h, 2);
  randomise_stack(*padded.vlm);
  {
    at::NoGradGuard no_grad;
    auto from = padded.vlm->named_parameters(/*recurse=*/true);
    for (auto& item : whole.vlm->named_parameters(/*recurse=*/true)) item.value().copy_(from[item.key()]);
  }
  at::manual_seed(3);
  const at::Tensor frames = at::rand({2, 4, 3, 8, 8});
  at::Tensor pixels = frames.narrow(0, 0, rows).clone();
  pixels[0].narrow(0, 2, 2).zero_();
  const at::Tensor mask = frame_mask({1, 1, 0, 0, 1, 1, 1, 1}, 2).narrow(0, 0, rows);
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
  // A clip without a real frame (one that could not be decoded): finite outputs, gradients and metrics.
  const ClipRun none = run_clip(*padded.vlm, at::zeros({1, 4, 3, 8, 8}), at::zeros({1, 4}, at::kBool));
  EXPECT_TRUE(at::isfinite(none.logits).all().item<bool>()) << arch;
  for (const auto& [name, g] : none.grads) EXPECT_TRUE(at::isfinite(g).all().item<bool>()) << arch << " " << name;
  for (const auto& [name, value] : padded.vlm->step_metrics()) EXPECT_TRUE(std::isfinite(value)) << arch << " " << name;
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

// The attention kernels [model] sdpa_backend picks in fp32: the tiled one and the explicit one.
const char* const kBackends[] = {"sdpa_backend = \"flash\"\n", "sdpa_backend = \"math\"\n"};

// MoT: each row's image positions count from 0 at its first real frame, and the one global attention keeps the padding
// to itself.
TEST(PaddedClip, MotTextSeesThePaddedClipAsTheUnpaddedOne) {
  for (const char* backend : kBackends) expect_padding_changes_nothing("mot", "", /*rows=*/2, backend);
}

// MoMa: the shared attention keeps the padding to itself and the image experts pick among the real positions only.
// Expert choice picks over the whole batch by design, so another row's tokens change which of row 0's an expert picks:
// the padded clip is the batch's only row, against its unpadded clip alone, with the router noise off (each run would
// draw its own).
TEST(PaddedClip, MomaTextSeesThePaddedClipAsTheUnpaddedOne) {
  for (const char* backend : kBackends) {
    expect_padding_changes_nothing("moma", "moma_gumbel_noise = false\n", /*rows=*/1, backend);
  }
}

}  // namespace
}  // namespace kforge::test
