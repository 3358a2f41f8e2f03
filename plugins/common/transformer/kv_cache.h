// KVCache: per-layer keys (after RoPE, before GQA expansion) and values of the positions decoded so far.
#pragma once

#include <kforge/sdk/model.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace kforge::builtin::models {

/// Preallocated (B, KV, capacity, hd) K/V per layer, allocated on first use in the keys' dtype/device.
/// Every layer writes the same positions [fill, fill + T); the transformer advances `fill` once per chunk.
class KVCache final : public sdk::Model::DecodeState {
 public:
  KVCache(int64_t n_layers, int64_t batch, int64_t capacity);

  /// Stores k/v (B, KV, T, hd) of `layer` at [fill, fill + T); returns that layer's K/V for [0, fill + T).
  std::pair<at::Tensor, at::Tensor> update(size_t layer, const at::Tensor& k, const at::Tensor& v);
  void advance(int64_t n) { fill_ += n; }
  /// A cache of batch * copies rows: row b * copies + j a copy of row b's positions, with this one's fill and capacity.
  std::unique_ptr<KVCache> fork(int64_t copies) const;

  int64_t fill() const { return fill_; }
  int64_t batch() const { return batch_; }
  int64_t capacity() const { return capacity_; }

 private:
  struct Layer {
    at::Tensor k, v;
  };
  std::vector<Layer> layers_;
  int64_t batch_, capacity_, fill_ = 0;
};

}  // namespace kforge::builtin::models
