// The built-in arches' [vlm] rules (arch_rules.h), worded as kforge's own config rules.
#include "arch_rules.h"

#include <set>
#include <string>

namespace kforge::vlm {
namespace {

using sdk::RuleSection;

// MoT / MoMa modality lists: at least two, "image" and "text" among them, no duplicates.
void check_modalities(const RuleSection& v, const std::string& key) {
  const std::vector<std::string> list = v.strings(key);
  std::set<std::string> seen;
  for (const std::string& m : list) {
    v.require(seen.insert(m).second, key, "must not contain duplicates ('" + m + "' twice)");
  }
  v.require(list.size() >= 2, key, "must have at least 2 entries");
  v.require(seen.count("image") == 1, key, "must include \"image\"");
  v.require(seen.count("text") == 1, key, "must include \"text\"");
}

void check_moma_experts(const RuleSection& v) {
  const std::string key = "moma_experts_per_modality";
  const std::vector<std::string> list = v.strings("moma_modalities");
  const std::set<std::string> modalities(list.begin(), list.end());
  const std::map<std::string, int64_t> experts = v.int_dict(key);
  for (const auto& [name, count] : experts) {
    v.require(modalities.count(name) == 1, key,
              "has unknown modality '" + name + "' (allowed: the moma_modalities " + v.toml("moma_modalities") + ")");
    v.require(count > 0, key,
              "the expert count of '" + name + "' must be > 0. For dense per-modality FFN use arch='mot' instead");
  }
  for (const std::string& m : modalities) {
    v.require(experts.count(m) == 1, key,
              "has no entry for modality '" + m + "' (it must cover exactly the moma_modalities " +
                  v.toml("moma_modalities") + ")");
  }
}

// The cross-attention blocks against the text model: at least one block, heads that divide dim and key/value heads
// that divide the heads (0 takes the model's heads, and then the block's).
void check_cross_attention_shape(const RuleSection& vlm, const RuleSection& m) {
  const int64_t every = vlm.i("cross_attention_every_n_layers"), layers = m.i("n_layers");
  vlm.require(every <= layers, "cross_attention_every_n_layers",
              "places no cross-attention block in the " + std::to_string(layers) +
                  " text blocks ([model] n_layers); set it to at most " + std::to_string(layers));
  const int64_t heads = vlm.i("cross_attention_n_heads") > 0 ? vlm.i("cross_attention_n_heads") : m.i("n_heads");
  const int64_t kv = vlm.i("cross_attention_n_kv_heads") > 0 ? vlm.i("cross_attention_n_kv_heads") : heads;
  vlm.require(heads > 0 && m.i("dim") % heads == 0, "cross_attention_n_heads",
              "gives " + std::to_string(heads) + " cross-attention heads, which do not divide [model] dim = " +
                  std::to_string(m.i("dim")));
  vlm.require(kv > 0 && heads % kv == 0, "cross_attention_n_kv_heads",
              "gives " + std::to_string(kv) + " key/value heads, which do not divide the " + std::to_string(heads) +
                  " cross-attention heads");
}

}  // namespace

void check_cross_attention(const sdk::ResolvedConfig& config) {
  const RuleSection v = config.section("vlm");
  v.positive("cross_attention_every_n_layers");
  v.non_negative("cross_attention_n_heads");
  v.non_negative("cross_attention_n_kv_heads");
  if (config.world_size() > 0) check_cross_attention_shape(v, config.section("model"));
}

void check_mot(const sdk::ResolvedConfig& config) {
  const RuleSection v = config.section("vlm");
  check_modalities(v, "mot_modalities");
  v.non_negative("mot_image_n_heads");
  v.non_negative("mot_image_n_kv_heads");
  v.require(!v.b("mot_warm_start_from_text") || !v.s("mot_warm_start_path").empty(), "mot_warm_start_from_text",
            "requires [vlm] mot_warm_start_path (the step directory of a text checkpoint to copy from)");
  v.require(v.b("mot_warm_start_from_text") || v.s("mot_warm_start_path").empty(), "mot_warm_start_path",
            "is set, but [vlm] mot_warm_start_from_text = false: set that to true to warm-start from it, or remove "
            "the path");
}

void check_moma(const sdk::ResolvedConfig& config) {
  const RuleSection v = config.section("vlm");
  check_modalities(v, "moma_modalities");
  check_moma_experts(v);
  v.non_negative("moma_capacity_factor");
  if (config.world_size() == 0) return;
  config.section("model").require(config.section("model").i("num_experts") == 0, "num_experts",
                                  "MoMa + model.num_experts > 0 is rejected: MoMa takes its expert counts from "
                                  "[vlm] moma_experts_per_modality; set num_experts = 0 with arch = \"moma\"");
  config.section("distributed")
      .require(config.section("distributed").i("ep") == 1, "ep", "MoMa + Expert Parallelism is not supported");
}

}  // namespace kforge::vlm
