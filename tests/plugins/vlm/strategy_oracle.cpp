// The tiny VLM config, the parts and the oracle comparison of the own-stack strategies' tests.
#include "strategy_oracle.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <kforge/sdk/error.h>

#include <fstream>
#include <iomanip>
#include <sstream>
#include <utility>
#include <vector>

#include "support/expect_text.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/test_host.h"
#include "support/tiny_tower.h"

namespace kforge::test {
namespace {

// The [model] settings the oracles read, as a JSON object.
std::string model_json(const sdk::ConfigView& m) {
  std::ostringstream out;
  out << std::setprecision(17) << std::boolalpha << "{\"dim\": " << m.get_int("dim")
      << ", \"n_layers\": " << m.get_int("n_layers") << ", \"n_heads\": " << m.get_int("n_heads")
      << ", \"n_kv_heads\": " << (m.has("n_kv_heads") ? m.get_int("n_kv_heads") : m.get_int("n_heads"))
      << ", \"norm_type\": \"" << m.get_string("norm_type") << "\", \"norm_eps\": " << m.get_float("norm_eps")
      << ", \"activation\": \"" << m.get_string("activation") << "\", \"rope_theta\": " << m.get_float("rope_theta")
      << ", \"tie_embeddings\": " << m.get_bool("tie_embeddings") << ", \"qk_norm\": " << m.get_bool("qk_norm") << "}";
  return out.str();
}

}  // namespace

std::string parts_json(const sdk::ConfigView& model) {
  return R"("tower": "siglip2", "vision": {"hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
      "num_attention_heads": 2, "image_size": 8, "patch_size": 4},
      "adapter": {"type": "mlp_2layer", "activation": "gelu", "hidden_dim": 0, "out_dim": )" +
         std::to_string(model.get_int("dim")) + "}, \"model\": " + model_json(model);
}

std::string strategy_toml(const std::string& arch, const std::string& model, const std::string& vlm,
                          int64_t max_seq_len) {
  return "[model]\ndim = 16\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 23\ninit_std = 0.1\n"
         "max_seq_len = " +
         std::to_string(max_seq_len) + "\n" + model + "[vision_encoder]\ntype = \"siglip2\"\npath = \"" +
         tiny_tower_dir() + "\"\n[adapter]\ntype = \"mlp_2layer\"\n[vlm]\narch = \"" + arch + "\"\nmax_text_len = 6\n" +
         vlm;
}

BuiltStrategy build_strategy(const ComponentHost& h, int64_t frames) {
  BuiltStrategy b;
  b.encoder = h.components.vision_encoder();
  b.text = h.components.model();
  b.adapter = h.components.adapter({b.encoder->feature_dim(), h.job.view("model").get_int("dim")});
  sdk::VisionLanguageParts parts{b.encoder, b.adapter, b.text};
  parts.frames = frames;
  if (frames > 1) parts.time_embedding = h.components.time_embedding({h.job.view("model").get_int("dim")});
  b.vlm = h.components.vision_language_model(std::move(parts));
  return b;
}

std::string build_refusal(const std::string& toml) {
  return config_error_of([&] {
    const ComponentHost h(toml);
    build_strategy(h);
  });
}

std::set<std::string> stack_parameter_names(const torch::nn::Module& vlm) {
  std::set<std::string> names;
  for (const auto& p : vlm.named_parameters()) {
    if (p.key().rfind("transformer.", 0) == 0) names.insert(p.key());
  }
  return names;
}

int64_t parameter_elements(const torch::nn::Module& vlm) {
  int64_t n = 0;
  for (const at::Tensor& p : vlm.parameters()) n += p.numel();
  return n;
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
    ADD_FAILURE() << "expected an sdk::Error";
    return "";
  } catch (const sdk::Error& e) {
    return e.what();
  }
}

void randomise_stack(torch::nn::Module& vlm) {
  at::NoGradGuard no_grad;
  for (auto& p : vlm.named_parameters()) {
    if (p.key().rfind("transformer.", 0) == 0)
      p.value().normal_(p.value().dim() == 1 ? 1.0 : 0.0, p.value().dim() == 1 ? 0.2 : 0.3);
  }
}

int expect_matches_oracle(const std::string& script, sdk::VisionLanguageModel& vlm, const sdk::ConfigView& model,
                          const std::string& more_json) {
  EXPECT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  const auto dir = temp_dir("oracle_" + script);
  const int64_t vocab = model.get_int("vocab_size");
  const at::Tensor pixels = at::rand({2, 3, 8, 8}) * 2 - 1;
  const at::Tensor tokens = at::randint(0, vocab, {2, 6}, at::kLong);
  const at::Tensor targets = at::randint(0, vocab, {2, 6}, at::kLong);
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, at::Tensor>>{{"pixels", pixels}, {"tokens", tokens}, {"targets", targets}}) {
    write_npy(dir / (name + ".npy"), value);
  }
  for (auto& p : vlm.named_parameters()) {
    write_npy(dir / (p.key() + ".npy"), p.value());
    p.value().mutable_grad().reset();
  }
  std::ofstream(dir / "config.json") << "{" << parts_json(model) << (more_json.empty() ? "" : ", ") << more_json
                                     << "}";
  vlm.set_images(pixels);
  const at::Tensor logits = vlm.forward(tokens);
  const at::Tensor loss = at::cross_entropy_loss(logits.reshape({-1, vocab}), targets.reshape({-1}));
  loss.backward();

  std::string out;
  EXPECT_EQ(run_oracle(script, {dir.string()}, &out), 0) << out;
  expect_within(logits.detach(), read_npy(dir / "logits.npy"), "logits", 1e-5, 1e-4);
  expect_within(loss.detach().reshape({1}), read_npy(dir / "loss.npy"), "loss", 1e-5, 1e-4);
  int compared = 0;
  for (const auto& p : vlm.named_parameters()) {
    const at::Tensor expected = read_npy(dir / ("grad." + p.key() + ".npy"));
    const at::Tensor grad = p.value().grad().defined() ? p.value().grad() : at::zeros_like(p.value());
    expect_within(grad, expected, "grad of " + p.key(), 1e-5, 1e-4);
    ++compared;
  }
  std::filesystem::remove_all(dir);
  return compared;
}

}  // namespace kforge::test
