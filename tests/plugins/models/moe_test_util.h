// MoE test helpers: layer configs, routers built through the host, seeded weights, and a naive
// per-token reference for the routed-expert sum.
#pragma once

#include <ATen/ATen.h>
#include <kforge/sdk/router.h>

#include <memory>
#include <string>

#include "model_builder.h"
#include "transformer/model_config.h"
#include "transformer/moe.h"

namespace kforge::test::models {

/// A small MoE layer config: dim 16, expert width 32 (ffn_hidden_dim 32, multiplier 1).
inline kforge::builtin::models::ModelConfig moe_config(int64_t experts, int64_t top_k) {
  kforge::builtin::models::ModelConfig c;
  c.dim = 16;
  c.n_layers = 2;
  c.n_heads = 2;
  c.n_kv_heads = 2;
  c.vocab_size = 32;
  c.ffn_hidden_dim = 32;
  c.num_experts = experts;
  c.moe_top_k = top_k;
  return c;
}

/// The router plugin `name` built by the host, as the transformer builds it ([model] defaults).
inline std::shared_ptr<sdk::Router> host_router(const std::string& name, const sdk::RouterSpec& spec) {
  static const config::JobConfig job = job_for("[model]\ndim = 8\nn_layers = 1\nn_heads = 2\nvocab_size = 16\n");
  const plugins::Components comps(host().registry, job);
  return comps.make_router(name, spec);
}

/// An MoE layer for `c` with router `router` and every >= 2-D parameter drawn N(0, std) from `seed`.
inline std::shared_ptr<kforge::builtin::models::MoE> make_moe(const kforge::builtin::models::ModelConfig& c, uint64_t seed,
                                                     const std::string& router = "softmax_topk", double std = 0.3) {
  auto moe = std::make_shared<kforge::builtin::models::MoE>(c, host_router(router, {c.dim, c.num_experts, c.moe_top_k}));
  at::manual_seed(seed);
  at::NoGradGuard no_grad;
  for (auto& p : moe->named_parameters()) {
    if (p.value().dim() >= 2) p.value().normal_(0.0, std);
  }
  return moe;
}

/// sum_k weights[t, k] * expert_{indices[t, k]}(x[t]), one token and one slot at a time.
inline at::Tensor per_token_reference(const kforge::builtin::models::MoE& moe, const at::Tensor& x_flat,
                                      const at::Tensor& weights, const at::Tensor& indices) {
  std::vector<at::Tensor> rows;
  for (int64_t t = 0; t < x_flat.size(0); ++t) {
    at::Tensor row = at::zeros({1, x_flat.size(1)}, x_flat.options());
    for (int64_t k = 0; k < indices.size(1); ++k) {
      row = row + weights[t][k] * moe.experts().forward(indices[t][k].item<int64_t>(), x_flat.narrow(0, t, 1));
    }
    rows.push_back(row);
  }
  return at::cat(rows);
}

}  // namespace kforge::test::models
