// LinearAdapter: a single biased projection.
#include "linear_adapter.h"

namespace kforge::vision {

LinearAdapter::LinearAdapter(int64_t in_dim, int64_t out_dim) {
  proj_ = register_module("proj", torch::nn::Linear(in_dim, out_dim));
}

at::Tensor LinearAdapter::forward(const at::Tensor& x) { return proj_->forward(x); }

}  // namespace kforge::vision
