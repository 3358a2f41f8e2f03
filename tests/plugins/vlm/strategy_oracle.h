// What the tests of the strategies that build their own stack (mot, moma) share: a tiny VLM config, the parts built as
// the host builds them, and the comparison of a strategy's logits and gradients with its python3-torch oracle.
#pragma once

#include <kforge/sdk/config_view.h>
#include <kforge/sdk/vision_language_model.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "support/component_host.h"

namespace kforge::test {

/// A VLM config: the tiny siglip2 tower (4 image tokens of 8 features), an mlp_2layer adapter and a [model] of dim 16,
/// 2 layers, 4 heads over 2 key/value heads, vocab 23, init_std 0.1 and max_seq_len `max_seq_len`; `model` and `vlm`
/// are more lines of those sections ([vlm] after arch and max_text_len = 6).
std::string strategy_toml(const std::string& arch, const std::string& model = "", const std::string& vlm = "",
                          int64_t max_seq_len = 32);

/// The parts, kept by the test, and the strategy composing them.
struct BuiltStrategy {
  std::shared_ptr<sdk::VisionEncoder> encoder;
  std::shared_ptr<sdk::Adapter> adapter;
  std::shared_ptr<sdk::Model> text;
  std::shared_ptr<sdk::VisionLanguageModel> vlm;
};

/// The parts as the host builds them (the adapter from the tower's width to [model] dim, for clips the config's
/// [time_embedding] if any) and the strategy from them, for rows of `frames` images (clips when > 1).
BuiltStrategy build_strategy(const ComponentHost& h, int64_t frames = 1);

/// The message of the sdk::ConfigError that building the strategy of `toml` throws (a test failure when none).
std::string build_refusal(const std::string& toml);

/// The names of the strategy's stack parameters (those under "transformer.").
std::set<std::string> stack_parameter_names(const torch::nn::Module& vlm);

/// The elements of all the strategy's parameters (the stack's, the encoder's and the adapter's).
int64_t parameter_elements(const torch::nn::Module& vlm);

/// The message of the sdk::Error `call` throws (a test failure and "" when it throws none).
std::string error_of(const std::function<void()>& call);

/// Gives every weight of the strategy's stack ("transformer.") a random value away from its init (zero o_proj and
/// down_proj, unit norms): 1-D ones N(1, 0.2), the others N(0, 0.3), so every parameter shapes the logits.
void randomise_stack(torch::nn::Module& vlm);

/// The members of the oracles' config.json that describe the parts (without the braces): "tower", "vision" (the tiny
/// siglip2 tower), "adapter" (mlp_2layer to [model] dim) and "model" (the host's [model] settings `model`).
std::string parts_json(const sdk::ConfigView& model);

/// Runs `vlm` (in its current mode) on random images and tokens of 2 rows of 6 and its mean cross-entropy backward;
/// tests/oracles/<script> gets them, the parameters and config.json ({"tower", "vision", "adapter", "model": the host's
/// [model] settings `model`, and `more_json`, more members such as "moma": {...}}). Expects the oracle's logits, loss
/// and gradient of every parameter (a parameter kforge gives no gradient: all zeros there), within atol 1e-5 and rtol
/// 1e-4 (an fp32 model against a float64 reference, as the joint decoder's test). Returns the parameters compared.
int expect_matches_oracle(const std::string& script, sdk::VisionLanguageModel& vlm, const sdk::ConfigView& model,
                          const std::string& more_json = "");

}  // namespace kforge::test
