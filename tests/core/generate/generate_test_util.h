// Test helpers: tiny transformers built through the plugin, and a reference greedy loop over forward().
#pragma once

#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "plugins/models/model_builder.h"

namespace kforge::test::gen {

/// A random-weight transformer with `n_kv_heads` (4 query heads, dim 32, 2 layers, vocab 64, max_seq_len 32).
inline std::shared_ptr<sdk::Model> tiny_model(int n_kv_heads, uint64_t seed = 7) {
  at::manual_seed(seed);
  return models::build_model("[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = " +
                             std::to_string(n_kv_heads) + "\nvocab_size = 64\nmax_seq_len = 32\n");
}

/// rows x length token ids in [0, 64), deterministic.
inline std::vector<std::vector<int64_t>> prompts(int rows, int length, int salt = 0) {
  std::vector<std::vector<int64_t>> out(rows);
  for (int r = 0; r < rows; ++r) {
    for (int i = 0; i < length; ++i) out[r].push_back((i * 11 + r * 5 + salt * 3 + 1) % 64);
  }
  return out;
}

}  // namespace kforge::test::gen
