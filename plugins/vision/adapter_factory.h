// make_adapter: builds the [adapter] type by name from its keys (KempnerForge's AdapterConfig).
#pragma once

#include <kforge/sdk/adapter.h>

#include <memory>
#include <string>
#include <vector>

namespace kforge::vision {

struct AdapterOptions {
  std::string type = "mlp_2layer";
  int64_t in_dim = 0;               // the encoder's feature_dim
  int64_t out_dim = 0;              // the language model's dim
  int64_t hidden_dim = 0;           // mlp_2layer; 0 means out_dim
  std::string activation = "gelu";  // mlp_2layer
  int64_t pool_window = 2;          // avgpool, attentional_pool
  int64_t pool_heads = 16;          // attentional_pool
};

/// "mlp_2layer", "linear", "avgpool", "attentional_pool".
const std::vector<std::string>& adapter_types();

/// Throws sdk::ConfigError naming the key and value: an unknown type (listing adapter_types()), a
/// non-positive in_dim/out_dim, a negative hidden_dim, and each adapter's own checks.
std::shared_ptr<sdk::Adapter> make_adapter(const AdapterOptions& options);

}  // namespace kforge::vision
