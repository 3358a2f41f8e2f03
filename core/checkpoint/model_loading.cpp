// Model loading: name-by-name copy with the shape and coverage checks.
#include "checkpoint/model_loading.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <set>
#include <string>

#include "kforge/sdk/error.h"

namespace kforge::checkpoint {

void load_model_weights(torch::nn::Module& model, const Snapshot& s) {
  at::NoGradGuard no_grad;
  std::set<std::string> expected;
  auto load = [&](const std::string& name, at::Tensor target) {
    expected.insert(name);
    auto it = s.model.find(name);
    if (it == s.model.end()) {
      throw sdk::ConfigError(
          fmt::format("checkpoint step {} has no tensor for model parameter '{}': it was written by a "
                      "different model config (compare its config.toml with yours)",
                      s.step, name));
    }
    if (it->second.sizes() != target.sizes()) {
      throw sdk::ConfigError(
          fmt::format("checkpoint step {}: '{}' has shape {} but the model expects {}: the [model] "
                      "config changed since it was written",
                      s.step, name, c10::str(it->second.sizes()), c10::str(target.sizes())));
    }
    target.copy_(it->second);
  };
  for (const auto& item : model.named_parameters(true)) load(item.key(), item.value());
  for (const auto& item : model.named_buffers(true)) load(item.key(), item.value());
  for (const auto& [name, t] : s.model) {
    if (!expected.count(name)) {
      throw sdk::ConfigError(
          fmt::format("checkpoint step {} has '{}', which this model does not have: the [model] config "
                      "changed since it was written",
                      s.step, name));
    }
  }
}

}  // namespace kforge::checkpoint
