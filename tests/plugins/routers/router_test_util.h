// Router test helpers: setting a router's gate and reading its named tensors.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <string>

namespace kforge::test::routers {

/// The parameter or buffer `name` of `m` (fails the test's expectations with an undefined tensor if absent).
inline at::Tensor named(const torch::nn::Module& m, const std::string& name) {
  // The dicts are returned by value: keep them alive while `find`'s pointer is read.
  const auto parameters = m.named_parameters();
  if (const auto* p = parameters.find(name)) return *p;
  const auto buffers = m.named_buffers();
  if (const auto* b = buffers.find(name)) return *b;
  return {};
}

/// Copies `w` [E, dim] into the router's gate.weight.
inline void set_gate(torch::nn::Module& router, const at::Tensor& w) {
  at::NoGradGuard no_grad;
  named(router, "gate.weight").copy_(w);
}

}  // namespace kforge::test::routers
