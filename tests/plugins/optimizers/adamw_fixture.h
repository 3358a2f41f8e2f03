// Model-like named parameters, a fixed gradient sequence and TOML for the AdamW tests.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kforge/sdk/optimizer.h"

namespace kforge::test {

/// Names chosen to cover every grouping rule: embedding, >= 2-D weights, 1-D norm and bias, a 2-D
/// tensor named "bias", a trainable tensor that never gets a gradient, and a frozen one.
struct AdamWFixture {
  static constexpr int64_t kSteps = 6;
  static constexpr int kUnused = 6;  ///< index of "layers.0.unused.weight" (never a gradient)
  static constexpr int kFrozen = 8;  ///< index of "frozen.weight" (requires_grad = false)

  static const std::vector<std::string>& names();
  /// Fresh leaf tensors with seeded values; all but kFrozen require grad.
  static std::vector<sdk::NamedParameter> params(at::ScalarType dtype);
  /// Deep copies (new leaves with the same values and requires_grad).
  static std::vector<sdk::NamedParameter> copy(const std::vector<sdk::NamedParameter>& params);
  /// Whether parameter `index` has a gradient at `step` (some skip single steps, one never has one).
  static bool has_grad(int64_t step, int index);
  /// The gradient of parameter `index` at `step` (seeded), or an undefined tensor.
  static at::Tensor grad(int64_t step, int index, const at::Tensor& like);
  /// LambdaLR factor of each step: 0 first (warmup), then changes midway.
  static double lr_factor(int64_t step);
  /// Runs steps [first, last): sets each factor and the step's gradients, then steps.
  static void run(sdk::Optimizer& opt, const std::vector<sdk::NamedParameter>& params, int64_t first, int64_t last);
  /// "[optimizer]" TOML selecting adamw with these values (betas 0.9/0.95, eps 1e-8).
  static std::string toml(double lr, double weight_decay, bool decay_embeddings);
};

}  // namespace kforge::test
