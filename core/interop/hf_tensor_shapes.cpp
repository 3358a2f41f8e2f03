// The tensors config.json's sizes give kforge's transformer, checked against the weight files before the model is
// built.
#include "interop/hf_tensor_shapes.h"

#include <c10/util/ArrayRef.h>
#include <c10/util/StringUtil.h>
#include <fmt/format.h>

#include <functional>
#include <set>
#include <vector>

#include "interop/hf_names.h"
#include "kforge/sdk/error.h"

namespace kforge::interop {
namespace fs = std::filesystem;
namespace {

// One tensor of the model: its kforge name, its shape and the config.json keys that give it.
struct ShapedTensor {
  std::string name;
  std::vector<int64_t> shape;
  const char* keys;
};

// a * b or a + b, or a ConfigError naming `what` (the config.json keys it combines) when it does not fit in int64.
int64_t shapes_checked(bool product, int64_t a, int64_t b, const fs::path& config, const std::string& what) {
  int64_t out = 0;
  if (product ? __builtin_mul_overflow(a, b, &out) : __builtin_add_overflow(a, b, &out)) {
    throw sdk::ConfigError(
        fmt::format("{}: {} = {} {} {} does not fit in int64: no model kforge can hold; check those sizes",
                    config.string(), what, a, product ? "x" : "+", b));
  }
  return out;
}

// The parameter count of `a`'s model and its bytes in float32 (the import's dtype), each checked to fit in int64.
void check_parameter_bytes(const HfArchitecture& a, const fs::path& config) {
  const auto mul = [&](int64_t x, int64_t y, const std::string& what) {
    return shapes_checked(true, x, y, config, what);
  };
  const auto add = [&](int64_t x, int64_t y, const std::string& what) {
    return shapes_checked(false, x, y, config, what);
  };
  const int64_t square = mul(a.dim, a.dim, "'hidden_size' x 'hidden_size'");
  const int64_t kv = mul(mul(a.n_kv_heads, a.dim / a.n_heads, "'num_key_value_heads' x the head size"), a.dim,
                         "'num_key_value_heads' x the head size x 'hidden_size'");
  const int64_t attention = add(add(mul(2, square, "q and o"), mul(2, kv, "k and v"), "the attention's projections"),
                                mul(2, a.dim, "two norms"), "a layer's attention and norms");
  const int64_t swiglu = mul(3, mul(a.intermediate_size, a.dim, "'intermediate_size' x 'hidden_size'"),
                             "3 x 'intermediate_size' x 'hidden_size'");
  const int64_t mlp = a.moe() ? mul(a.num_experts, add(swiglu, a.dim, "an expert and its router row"),
                                    "'num_local_experts' x (an expert and its router row)")
                              : swiglu;
  const int64_t layers =
      mul(a.n_layers, add(attention, mlp, "a layer's parameters"), "'num_hidden_layers' x a layer's parameters");
  const int64_t embedding = mul(a.vocab_size, a.dim, "'vocab_size' x 'hidden_size'");
  const int64_t ends = add(mul(a.tie_embeddings ? 1 : 2, embedding, "the embedding and the head"), a.dim,
                           "the embedding, the head and the final norm");
  mul(add(layers, ends, "the model's parameters"), 4, "the model's parameters' float32 bytes");
}

// Calls `visit` on each tensor of `a`'s model in the model's order.
void for_each_tensor(const HfArchitecture& a, const std::function<void(const ShapedTensor&)>& visit) {
  const int64_t kv_dim = a.n_kv_heads * (a.dim / a.n_heads);
  const std::vector<int64_t> norm = {a.dim};
  visit({"token_embedding.embedding.weight", {a.vocab_size, a.dim}, "vocab_size, hidden_size"});
  for (int64_t l = 0; l < a.n_layers; ++l) {
    const std::string layer = fmt::format("layers.{}.", l);
    visit({layer + "attention_norm.weight", norm, "hidden_size"});
    visit({layer + "attention.q_proj.weight", {a.dim, a.dim}, "hidden_size"});
    visit({layer + "attention.k_proj.weight",
           {kv_dim, a.dim},
           "num_key_value_heads x hidden_size / num_attention_heads, hidden_size"});
    visit({layer + "attention.v_proj.weight",
           {kv_dim, a.dim},
           "num_key_value_heads x hidden_size / num_attention_heads, hidden_size"});
    visit({layer + "attention.o_proj.weight", {a.dim, a.dim}, "hidden_size"});
    visit({layer + "mlp_norm.weight", norm, "hidden_size"});
    const auto swiglu = [&](const std::string& prefix) {
      visit({prefix + "gate_proj.weight", {a.intermediate_size, a.dim}, "intermediate_size, hidden_size"});
      visit({prefix + "up_proj.weight", {a.intermediate_size, a.dim}, "intermediate_size, hidden_size"});
      visit({prefix + "down_proj.weight", {a.dim, a.intermediate_size}, "hidden_size, intermediate_size"});
    };
    if (!a.moe()) {
      swiglu(layer + "mlp.");
      continue;
    }
    visit({layer + "mlp.router.gate.weight", {a.num_experts, a.dim}, "num_local_experts, hidden_size"});
    for (int64_t e = 0; e < a.num_experts; ++e) swiglu(fmt::format("{}mlp.experts.{}.", layer, e));
  }
  visit({"norm.weight", norm, "hidden_size"});
  if (!a.tie_embeddings) visit({"output_head.proj.weight", {a.vocab_size, a.dim}, "vocab_size, hidden_size"});
}

}  // namespace

void check_hf_tensor_shapes(const HfArchitecture& arch, const std::map<std::string, std::vector<int64_t>>& shapes,
                            const fs::path& dir) {
  check_parameter_bytes(arch, dir / "config.json");
  // The first tensor missing from `shapes` throws, so at most shapes.size() + 1 tensors are visited.
  std::set<std::string> expected;
  for_each_tensor(arch, [&](const ShapedTensor& t) {
    const std::string hf = hf_name_of(t.name).value_or(t.name);
    const auto it = shapes.find(t.name);
    if (it == shapes.end()) {
      throw sdk::ConfigError(
          fmt::format("{}: tensor '{}' (kforge '{}') is missing from the weights", dir.string(), hf, t.name));
    }
    if (it->second != t.shape) {
      throw sdk::ConfigError(fmt::format("{}: tensor '{}' has shape {}, but config.json's sizes need {} ({})",
                                         dir.string(), hf, c10::str(c10::IntArrayRef(it->second)),
                                         c10::str(c10::IntArrayRef(t.shape)), t.keys));
    }
    expected.insert(t.name);
  });
  for (const auto& [name, shape] : shapes) {
    if (!expected.count(name)) {
      throw sdk::ConfigError(fmt::format("{}: tensor '{}' is not a parameter of the model config.json describes",
                                         dir.string(), hf_name_of(name).value_or(name)));
    }
  }
}

}  // namespace kforge::interop
