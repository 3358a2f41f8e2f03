// MlpAdapter: two biased projections around an activation.
#include "mlp_adapter.h"

namespace kforge::vision {

MlpAdapter::MlpAdapter(int64_t in_dim, int64_t out_dim, int64_t hidden_dim, const std::string& activation)
    : act_(adapter_activation(activation)) {
  const int64_t hidden = hidden_dim > 0 ? hidden_dim : out_dim;
  proj1_ = register_module("proj1", torch::nn::Linear(in_dim, hidden));
  proj2_ = register_module("proj2", torch::nn::Linear(hidden, out_dim));
}

at::Tensor MlpAdapter::forward(const at::Tensor& x) { return proj2_->forward(act_(proj1_->forward(x))); }

}  // namespace kforge::vision
