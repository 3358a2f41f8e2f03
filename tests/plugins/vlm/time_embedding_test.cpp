// The per-frame time embedding ([time_embedding]) inside the strategies: a new one changes no logit and its projection
// gets a gradient; a trained one adds its vector of each frame's time to that frame's visual tokens (against the parts
// composed by hand), and padded frames, whatever their times, still change nothing.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>

#include "strategy_oracle.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

constexpr int64_t kTimedText = 6;

std::string timed_toml(const std::string& arch, const std::string& vlm_keys = "") {
  return strategy_toml(arch, "", vlm_keys) + "[video]\nmax_frames = 4\n[time_embedding]\ntype = \"sinusoidal\"\n";
}

at::Tensor text_tokens(int64_t rows) {
  return at::arange(kTimedText, at::kLong).unsqueeze(0).expand({rows, kTimedText}).contiguous();
}

// Copies every parameter `from` has into `to` (by name); `to` may have fewer.
void copy_parameters(torch::nn::Module& from, torch::nn::Module& to) {
  at::NoGradGuard no_grad;
  auto source = from.named_parameters(/*recurse=*/true);
  for (auto& item : to.named_parameters(/*recurse=*/true)) item.value().copy_(source[item.key()]);
}

// Gives the time embedding's projection random weights, as training would.
at::Tensor& train_projection(sdk::VisionLanguageModel& vlm) {
  at::NoGradGuard no_grad;
  at::Tensor& proj = vlm.named_parameters(/*recurse=*/true)["time_embedding.proj.weight"];
  proj.normal_(0.0, 0.5);
  return proj;
}

TEST(TimeEmbedding, ANewOneChangesNoLogitAndItsProjectionGetsAGradient) {
  const ComponentHost timed(timed_toml("joint_decoder"));
  const ComponentHost plain(strategy_toml("joint_decoder") + "[video]\nmax_frames = 4\n");
  const BuiltStrategy a = build_strategy(timed, 4), b = build_strategy(plain, 4);
  ASSERT_EQ(a.vlm->named_parameters(/*recurse=*/true).size(), b.vlm->named_parameters(/*recurse=*/true).size() + 1);
  copy_parameters(*a.vlm, *b.vlm);
  at::manual_seed(5);
  const at::Tensor clips = at::rand({2, 4, 3, 8, 8});
  const at::Tensor times = at::rand({2, 4}) * 10;
  a.vlm->set_images(clips, {}, times);
  b.vlm->set_images(clips);
  const at::Tensor logits = a.vlm->forward(text_tokens(2));
  EXPECT_TRUE(logits.equal(b.vlm->forward(text_tokens(2))));
  logits.square().mean().backward();
  const at::Tensor grad = a.vlm->named_parameters(/*recurse=*/true)["time_embedding.proj.weight"].grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_GT(grad.abs().max().item<double>(), 0.0);
}

TEST(TimeEmbedding, EachFramesVisualTokensGetTheVectorOfItsTime) {
  const ComponentHost h(timed_toml("joint_decoder"));
  const BuiltStrategy b = build_strategy(h, 4);
  train_projection(*b.vlm);
  at::manual_seed(6);
  const at::Tensor clips = at::rand({2, 4, 3, 8, 8});
  const at::Tensor times = at::rand({2, 4}) * 30;
  b.vlm->set_images(clips, {}, times);
  const at::Tensor logits = b.vlm->forward(text_tokens(2));
  // The parts composed by hand: each frame's adapter tokens plus the embedding of its time, in frame order.
  auto* embedding = dynamic_cast<sdk::TimeEmbedding*>(b.vlm->named_children()["time_embedding"].get());
  ASSERT_NE(embedding, nullptr);
  const at::Tensor tokens = b.adapter->forward(b.encoder->forward(clips.flatten(0, 1)));
  const at::Tensor framed =
      tokens.view({2, 4, tokens.size(1), tokens.size(2)}) + embedding->forward(times).unsqueeze(2);
  const at::Tensor expected = b.text->forward_prefixed(framed.flatten(1, 2), text_tokens(2));
  EXPECT_TRUE(at::allclose(logits, expected, 1e-5, 1e-6)) << (logits - expected).abs().max();
  // Other times, other logits.
  b.vlm->set_images(clips, {}, times + 1.0);
  EXPECT_FALSE(at::allclose(b.vlm->forward(text_tokens(2)), logits, 1e-5, 1e-6));
}

// Two real frames padded to four, their padding given arbitrary times, against the same two frames as a clip of two.
void expect_timed_padding_changes_nothing(const std::string& arch, const std::string& vlm_keys) {
  const ComponentHost padded_host(timed_toml(arch, vlm_keys));
  const ComponentHost whole_host(strategy_toml(arch, "", vlm_keys) +
                                 "[video]\nmax_frames = 2\nmin_frames = 1\n[time_embedding]\ntype = \"sinusoidal\"\n");
  const BuiltStrategy padded = build_strategy(padded_host, 4), whole = build_strategy(whole_host, 2);
  train_projection(*padded.vlm);
  copy_parameters(*padded.vlm, *whole.vlm);
  at::manual_seed(7);
  const at::Tensor frames = at::rand({1, 4, 3, 8, 8});
  const at::Tensor mask = at::tensor({1, 1, 0, 0}, at::kLong).to(at::kBool).view({1, 4});
  padded.vlm->set_images(frames, mask, at::tensor({0.25F, 1.5F, 7.0F, 9.0F}).view({1, 4}));
  whole.vlm->set_images(frames.narrow(1, 0, 2).contiguous(), {}, at::tensor({0.25F, 1.5F}).view({1, 2}));
  const at::Tensor a = padded.vlm->forward(text_tokens(1)), b = whole.vlm->forward(text_tokens(1));
  // The same sums in another order (more, masked, keys): fp32 rounding of values near 1.
  EXPECT_TRUE(at::allclose(a, b, 1e-4, 1e-5)) << arch << ": " << (a - b).abs().max();
}

TEST(TimeEmbedding, PaddedFramesChangeNothingWhateverTheirTimes) {
  expect_timed_padding_changes_nothing("joint_decoder", "");
  expect_timed_padding_changes_nothing("cross_attention", "cross_attention_every_n_layers = 1\n");
}

TEST(TimeEmbedding, TimesOfTheWrongShapeAreRefused) {
  const ComponentHost h(timed_toml("joint_decoder"));
  const BuiltStrategy b = build_strategy(h, 4);
  expect_has(error_of([&] {
               b.vlm->set_images(at::rand({1, 4, 3, 8, 8}), {}, at::zeros({1, 3}));
             }),
             {"joint_decoder: frame times must be a floating tensor [batch, frames] beside clips", "[1, 3]"});
}

}  // namespace
}  // namespace kforge::test
