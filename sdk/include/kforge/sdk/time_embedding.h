// TimeEmbedding: a video model's per-frame time embedding, selected by [time_embedding] type: each frame's time in its
// clip, in seconds, to a vector the strategy adds to every visual token of that frame.
#pragma once

#include <torch/nn/module.h>

#include <cstdint>

namespace kforge::sdk {

/// What the host tells the time embedding it builds; its own settings come from its config section.
struct TimeEmbeddingSpec {
  int64_t dim = 0;  ///< the language model's width ([model] dim): the width of the visual tokens
};

class TimeEmbedding : public torch::nn::Module {
 public:
  /// frame_times, float [B, F] (each frame's time in its clip in seconds) -> [B, F, dim]. A new embedding returns
  /// zeros, so adding it leaves a model's outputs as they were without it.
  virtual at::Tensor forward(const at::Tensor& frame_times) = 0;
};

}  // namespace kforge::sdk
