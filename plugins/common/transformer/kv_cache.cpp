// KVCache: lazy allocation, in-place appends and forks.
#include "kv_cache.h"

#include <ATen/ATen.h>

namespace kforge::builtin::models {

KVCache::KVCache(int64_t n_layers, int64_t batch, int64_t capacity)
    : layers_(static_cast<size_t>(n_layers)), batch_(batch), capacity_(capacity) {}

std::pair<at::Tensor, at::Tensor> KVCache::update(size_t layer, const at::Tensor& k, const at::Tensor& v) {
  Layer& l = layers_.at(layer);
  if (!l.k.defined()) {
    l.k = at::zeros({batch_, k.size(1), capacity_, k.size(3)}, k.options());
    l.v = at::zeros({batch_, v.size(1), capacity_, v.size(3)}, v.options());
  }
  const int64_t t = k.size(2);
  l.k.narrow(2, fill_, t).copy_(k);
  l.v.narrow(2, fill_, t).copy_(v);
  return {l.k.narrow(2, 0, fill_ + t), l.v.narrow(2, 0, fill_ + t)};
}

std::unique_ptr<KVCache> KVCache::fork(int64_t copies) const {
  auto forked = std::make_unique<KVCache>(static_cast<int64_t>(layers_.size()), batch_ * copies, capacity_);
  for (size_t i = 0; i < layers_.size(); ++i) {
    if (!layers_[i].k.defined()) continue;
    forked->layers_[i] = {layers_[i].k.repeat_interleave(copies, 0), layers_[i].v.repeat_interleave(copies, 0)};
  }
  forked->fill_ = fill_;
  return forked;
}

}  // namespace kforge::builtin::models
