// LinearAdapter: `linear`, one biased projection "proj" (out_dim, in_dim), token count kept.
#pragma once

#include <kforge/sdk/adapter.h>
#include <torch/nn/modules/linear.h>

namespace kforge::vision {

class LinearAdapter : public sdk::Adapter {
 public:
  LinearAdapter(int64_t in_dim, int64_t out_dim);
  at::Tensor forward(const at::Tensor& x) override;

 private:
  torch::nn::Linear proj_{nullptr};
};

}  // namespace kforge::vision
