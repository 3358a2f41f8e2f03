// A loss built through the registry from [train] TOML, seeded logits/labels, and value+gradient.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "support/component_host.h"

namespace kforge::test {

struct LossUnderTest {
  /// `train_toml`: lines of the [train] section (loss_fn, z_loss_weight, ce_chunk_size).
  explicit LossUnderTest(const std::string& train_toml)
      : host("[train]\n" + train_toml), loss(host.components.loss()) {}
  ComponentHost host;  ///< keeps the plugin loaded while `loss` lives
  std::unique_ptr<sdk::Loss> loss;
};

struct ValueAndGrad {
  at::Tensor value;  ///< the 0-d loss, detached
  at::Tensor grad;   ///< d loss / d logits
};

/// Runs the loss on a fresh leaf copy of `logits` and backpropagates.
ValueAndGrad value_and_grad(sdk::Loss& loss, const at::Tensor& logits, const at::Tensor& labels);

/// Seeded normal logits [batch, seq, vocab] scaled by `scale`.
at::Tensor seeded_logits(uint64_t seed, int64_t batch, int64_t seq, int64_t vocab, at::ScalarType dtype,
                         double scale = 3.0);

/// Seeded labels in [0, vocab), with about `ignored_fraction` of them set to kIgnoreIndex.
at::Tensor seeded_labels(uint64_t seed, int64_t batch, int64_t seq, int64_t vocab, double ignored_fraction);

}  // namespace kforge::test
