// The [vlm] section of the schema: its base keys, each arch's own keys, and hints for the other arches' keys.
#include <algorithm>

#include "config/schema_keys.h"
#include "config/schema_sections.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

using schema_parts::bool_key;
using schema_parts::float_key;
using schema_parts::int_key;
using schema_parts::string_key;
using schema_parts::string_list_key;
using schema_parts::string_list_value;
using schema_parts::table_list_key;
using schema_parts::typed_dict_key;

Value freeze_directive(const char* module, bool frozen) {
  Value v = Value::make_table();
  v.set("module", Value::string(module));
  v.set("frozen", Value::boolean(frozen));
  return v;
}

// module_patterns: the three base aliases plus the arch's own alias (KempnerForge's defaults),
// sorted by name as every resolved dict is.
Value module_patterns(const std::string& arch) {
  Value v = Value::make_table();
  for (const char* alias : {"transformer", "vision_encoder", "adapter"}) {
    v.set(alias, string_list_value({alias, std::string(alias) + ".*"}));
  }
  if (arch == "cross_attention") {
    v.set("cross_attention",
          string_list_value({"transformer.cross_attention_layers", "transformer.cross_attention_layers.*"}));
  } else if (arch == "mot" || arch == "moma") {
    v.set(arch, string_list_value({"transformer.layers", "transformer.layers.*"}));
  }
  std::sort(v.table.begin(), v.table.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return v;
}

std::vector<KeySpec> vlm_base_keys(const std::string& arch) {
  return {string_key("arch", "joint_decoder", "VLM architecture (a modality_strategy plugin)"),
          string_key("dataset", "image_text",
                     "image-text data reader (an image_text_dataset plugin) of [data] dataset_path"),
          int_key("max_text_len", 512, "fixed text length (padded)"),
          int_key("max_image_bytes", int64_t{64} << 20, "largest image (or WebDataset member) read, in bytes"),
          table_list_key("freeze", &schema_parts::freeze_spec_schema(), "static freeze directives ([[vlm.freeze]])",
                         Value::make_list({freeze_directive("vision_encoder", true)})),
          table_list_key("freeze_schedule", &schema_parts::freeze_stage_schema(),
                         "freeze stages by step ([[vlm.freeze_schedule]])"),
          typed_dict_key("module_patterns", KeyType::StringList, module_patterns(arch),
                         "module alias -> fnmatch patterns over parameter names")};
}

std::vector<KeySpec> vlm_arch_keys(const std::string& arch) {
  if (arch == "cross_attention") {
    return {int_key("cross_attention_every_n_layers", 4, "a cross-attention block after every n-th text block"),
            int_key("cross_attention_n_heads", 0, "cross-attention heads (0: model n_heads)"),
            int_key("cross_attention_n_kv_heads", 0, "cross-attention key/value heads (0: its n_heads)")};
  }
  if (arch == "mot") {
    return {
        string_list_key("mot_modalities", {"image", "text"}, "modalities with their own weights"),
        int_key("mot_image_n_heads", 0, "image-stream heads (0: model n_heads)"),
        int_key("mot_image_n_kv_heads", 0, "image-stream key/value heads (0: model n_kv_heads)"),
        bool_key("mot_warm_start_from_text", false,
                 "start from a dense text checkpoint: its weights copied into every modality"),
        string_key("mot_warm_start_path", "", "the text checkpoint's step directory (of a text or joint_decoder run)")};
  }
  if (arch == "moma") {
    Value experts = Value::make_table();
    experts.set("image", Value::integer(4));
    experts.set("text", Value::integer(4));
    return {string_list_key("moma_modalities", {"image", "text"}, "modalities with their own expert groups"),
            typed_dict_key("moma_experts_per_modality", KeyType::Int, experts, "experts per modality"),
            float_key("moma_capacity_factor", 0.0, "expert-choice capacity (0: 1/#experts of the modality)"),
            bool_key("moma_gumbel_noise", true, "Gumbel-sigmoid noise on router scores in training")};
  }
  return {};
}

}  // namespace

const std::vector<std::string>& vlm_arches() {
  static const std::vector<std::string> arches = {"cross_attention", "joint_decoder", "moma", "mot"};
  return arches;
}

SectionSpec vlm_section(const std::string& arch) {
  const auto& arches = vlm_arches();
  SectionSpec spec{"vlm", vlm_base_keys(arch), true,
                   "vision-language model; arch picks the architecture and its keys (requires [vision_encoder])"};
  for (KeySpec& k : vlm_arch_keys(arch)) spec.keys.push_back(std::move(k));
  for (const std::string& other : arches) {
    if (other == arch) continue;
    for (const KeySpec& k : vlm_arch_keys(other)) {
      spec.hints.emplace_back(k.name, "it belongs to [vlm] arch = \"" + other + "\", and this config has arch = \"" +
                                          arch + "\". Set arch = \"" + other + "\" or remove the key");
    }
  }
  return spec;
}

SectionSpec section_of_component(const std::string& section, const std::string& name) {
  if (section == "vlm") return vlm_section(name);
  for (const SectionSpec& s : core_schema()) {
    if (s.name == section) return s;
  }
  throw sdk::Error("the core schema has no [" + section + "] section");
}

}  // namespace kforge::config
