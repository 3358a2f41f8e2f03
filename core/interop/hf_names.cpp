// Tensor names: one table of (kforge pattern, Hugging Face pattern) pairs, read in both directions.
#include "interop/hf_names.h"

#include <regex>
#include <vector>

namespace kforge::interop {
namespace {

// "{L}" stands for a layer index and "{E}" for an expert index, in both patterns of a pair.
struct NamePair {
  const char* kforge;
  const char* hf;
};
constexpr NamePair kNamePairs[] = {
    {"token_embedding.embedding.weight", "model.embed_tokens.weight"},
    {"norm.weight", "model.norm.weight"},
    {"output_head.proj.weight", "lm_head.weight"},
    {"layers.{L}.attention_norm.weight", "model.layers.{L}.input_layernorm.weight"},
    {"layers.{L}.mlp_norm.weight", "model.layers.{L}.post_attention_layernorm.weight"},
    {"layers.{L}.attention.q_proj.weight", "model.layers.{L}.self_attn.q_proj.weight"},
    {"layers.{L}.attention.k_proj.weight", "model.layers.{L}.self_attn.k_proj.weight"},
    {"layers.{L}.attention.v_proj.weight", "model.layers.{L}.self_attn.v_proj.weight"},
    {"layers.{L}.attention.o_proj.weight", "model.layers.{L}.self_attn.o_proj.weight"},
    {"layers.{L}.mlp.gate_proj.weight", "model.layers.{L}.mlp.gate_proj.weight"},
    {"layers.{L}.mlp.up_proj.weight", "model.layers.{L}.mlp.up_proj.weight"},
    {"layers.{L}.mlp.down_proj.weight", "model.layers.{L}.mlp.down_proj.weight"},
    {"layers.{L}.mlp.router.gate.weight", "model.layers.{L}.block_sparse_moe.gate.weight"},
    {"layers.{L}.mlp.experts.{E}.gate_proj.weight", "model.layers.{L}.block_sparse_moe.experts.{E}.w1.weight"},
    {"layers.{L}.mlp.experts.{E}.down_proj.weight", "model.layers.{L}.block_sparse_moe.experts.{E}.w2.weight"},
    {"layers.{L}.mlp.experts.{E}.up_proj.weight", "model.layers.{L}.block_sparse_moe.experts.{E}.w3.weight"},
};

// A pattern as a regex: dots literal, {L} and {E} as captured decimal indices (L first).
std::regex names_pattern_regex(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 3, "{L}") == 0 || pattern.compare(i, 3, "{E}") == 0) {
      out += "(0|[1-9][0-9]*)";
      i += 2;
    } else {
      if (pattern[i] == '.') out += '\\';
      out += pattern[i];
    }
  }
  return std::regex(out);
}

std::string names_fill(std::string pattern, const std::smatch& m) {
  for (size_t group = 1; group < m.size(); ++group) {
    const std::string key = group == 1 ? "{L}" : "{E}";
    pattern.replace(pattern.find(key), 3, m[group].str());
  }
  return pattern;
}

std::optional<std::string> names_translate(const std::string& name, bool to_hf) {
  static const auto compiled = [] {
    std::vector<std::pair<std::regex, std::regex>> out;
    for (const NamePair& p : kNamePairs) out.emplace_back(names_pattern_regex(p.kforge), names_pattern_regex(p.hf));
    return out;
  }();
  for (size_t i = 0; i < compiled.size(); ++i) {
    std::smatch m;
    if (std::regex_match(name, m, to_hf ? compiled[i].first : compiled[i].second)) {
      return names_fill(to_hf ? kNamePairs[i].hf : kNamePairs[i].kforge, m);
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> hf_name_of(const std::string& kforge_name) { return names_translate(kforge_name, true); }

std::optional<std::string> kforge_name_of(const std::string& hf_name) { return names_translate(hf_name, false); }

}  // namespace kforge::interop
