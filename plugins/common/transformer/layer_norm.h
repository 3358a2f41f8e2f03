// LayerNorm: standard layer normalisation with learnable weight (ones) and bias (zeros).
#pragma once

#include "norm.h"

namespace kforge::builtin::models {

class LayerNorm : public Norm {
 public:
  LayerNorm(int64_t dim, double eps);
  at::Tensor forward(const at::Tensor& x) override;

 private:
  at::Tensor weight_, bias_;  // "weight", "bias"
  int64_t dim_;
  double eps_;
};

}  // namespace kforge::builtin::models
