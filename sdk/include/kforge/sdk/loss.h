// Loss: (logits, labels) -> scalar training objective.
#pragma once

#include <ATen/core/Tensor.h>

namespace kforge::sdk {

/// Label value that contributes nothing to the loss.
inline constexpr int64_t kIgnoreIndex = -100;

class Loss {
 public:
  virtual ~Loss() = default;
  /// logits [batch, seq, vocab], labels int64 [batch, seq] -> 0-d tensor.
  virtual at::Tensor compute(const at::Tensor& logits, const at::Tensor& labels) = 0;
};

}  // namespace kforge::sdk
