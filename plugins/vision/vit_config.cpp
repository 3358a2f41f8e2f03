// VitConfig: Hugging Face vision tower config.json reading, defaults and validation.
#include "vit_config.h"

#include <kforge/sdk/error.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "activation.h"

namespace kforge::vision {
namespace {

[[noreturn]] void vit_config_error(const std::string& origin, const std::string& key, const std::string& value,
                                   const std::string& why) {
  throw sdk::ConfigError(origin + ": " + key + " = " + value + ": " + why);
}

// Typed keys of one config.json object; errors name the file and the key's path.
class VitJsonSection {
 public:
  VitJsonSection(const nlohmann::json& section, std::string prefix, std::string origin)
      : section_(section), prefix_(std::move(prefix)), origin_(std::move(origin)) {}
  int64_t integer(const std::string& key, int64_t fallback) const {
    return value(key, fallback, &nlohmann::json::is_number_integer, "expected an integer");
  }
  double number(const std::string& key, double fallback) const {
    return value(key, fallback, &nlohmann::json::is_number, "expected a number");
  }
  std::string string(const std::string& key, const std::string& fallback) const {
    return value(key, fallback, &nlohmann::json::is_string, "expected a string");
  }

 private:
  using TypeCheck = bool (nlohmann::json::*)() const noexcept;
  // The value at `key` (absent: `fallback`), refused unless `is` holds.
  template <class T>
  T value(const std::string& key, const T& fallback, TypeCheck is, const char* expected) const {
    auto it = section_.find(key);
    if (it == section_.end()) return fallback;
    if (!((*it).*is)()) vit_config_error(origin_, prefix_ + key, it->dump(), expected);
    return it->get<T>();
  }

  const nlohmann::json& section_;
  std::string prefix_, origin_;
};

// model_type values whose vision tower this code implements.
std::set<std::string> accepted_model_types(VitTower tower) {
  if (tower == VitTower::clip) return {"clip", "clip_vision_model"};
  return {"siglip", "siglip_vision_model"};
}

// A model_type at `key` (when present) must name the tower.
void check_model_type(const nlohmann::json& holder, const std::string& key, VitTower tower, const std::string& origin) {
  auto it = holder.find("model_type");
  if (it == holder.end()) return;
  if (!it->is_string()) vit_config_error(origin, key, it->dump(), "expected a string");
  const auto accepted = accepted_model_types(tower);
  if (accepted.count(it->get<std::string>()) != 0) return;
  std::string names;
  for (const auto& a : accepted) names += (names.empty() ? "" : ", ") + a;
  vit_config_error(origin, key, it->dump(),
                   std::string("not a ") + tower_name(tower) + " vision tower (accepted: " + names +
                       "; SigLIP2 NaFlex checkpoints are not supported, use a fixed-resolution one such as "
                       "google/siglip2-base-patch16-224)");
}

}  // namespace

const char* tower_name(VitTower tower) { return tower == VitTower::clip ? "clip" : "siglip2"; }

VitConfig VitConfig::defaults(VitTower tower) {
  VitConfig c;
  c.tower = tower;
  if (tower == VitTower::clip) {
    c.patch_size = 32;
    c.layer_norm_eps = 1e-5;
    c.hidden_act = "quick_gelu";
  }
  return c;
}

int64_t VitConfig::num_patches() const {
  const int64_t side = image_size / patch_size;
  return side * side;
}

void VitConfig::validate(const std::string& origin, const std::string& key_prefix) const {
  const std::pair<const char*, int64_t> sizes[] = {{"hidden_size", hidden_size},
                                                   {"intermediate_size", intermediate_size},
                                                   {"num_hidden_layers", num_hidden_layers},
                                                   {"num_attention_heads", num_attention_heads},
                                                   {"num_channels", num_channels},
                                                   {"image_size", image_size},
                                                   {"patch_size", patch_size}};
  for (const auto& [key, value] : sizes)
    if (value <= 0) vit_config_error(origin, key_prefix + key, std::to_string(value), "must be positive");
  if (hidden_size % num_attention_heads != 0)
    vit_config_error(origin, key_prefix + "hidden_size", std::to_string(hidden_size),
                     "must be a multiple of num_attention_heads (" + std::to_string(num_attention_heads) + ")");
  if (image_size < patch_size)
    vit_config_error(origin, key_prefix + "image_size", std::to_string(image_size),
                     "is smaller than patch_size (" + std::to_string(patch_size) + ")");
  if (!(layer_norm_eps > 0)) {
    std::ostringstream v;
    v << layer_norm_eps;
    vit_config_error(origin, key_prefix + "layer_norm_eps", v.str(), "must be positive");
  }
  tower_activation(hidden_act, origin + ": " + key_prefix + "hidden_act");
}

VitConfig read_vit_config(const std::filesystem::path& dir, VitTower tower) {
  const std::filesystem::path file = dir / "config.json";
  const std::string origin = file.string();
  std::ifstream stream(file);
  if (!stream)
    throw sdk::ConfigError("vision encoder " + std::string(tower_name(tower)) + ": cannot open " + origin +
                           " ([vision_encoder] path must be a local Hugging Face model directory holding "
                           "config.json and model.safetensors)");
  nlohmann::json root;
  try {
    root = nlohmann::json::parse(stream);
  } catch (const nlohmann::json::exception& e) {
    throw sdk::ConfigError(origin + ": not valid JSON: " + e.what());
  }
  if (!root.is_object()) throw sdk::ConfigError(origin + ": expected a JSON object at the top level");
  const bool nested = root.contains("vision_config");
  const std::string prefix = nested ? "vision_config." : "";
  if (nested && !root["vision_config"].is_object())
    vit_config_error(origin, "vision_config", root["vision_config"].dump(), "expected an object");
  const nlohmann::json& section = nested ? root["vision_config"] : root;

  check_model_type(root, "model_type", tower, origin);
  if (nested) check_model_type(section, prefix + "model_type", tower, origin);

  const VitConfig d = VitConfig::defaults(tower);
  const VitJsonSection keys(section, prefix, origin);
  VitConfig c = d;
  c.hidden_size = keys.integer("hidden_size", d.hidden_size);
  c.intermediate_size = keys.integer("intermediate_size", d.intermediate_size);
  c.num_hidden_layers = keys.integer("num_hidden_layers", d.num_hidden_layers);
  c.num_attention_heads = keys.integer("num_attention_heads", d.num_attention_heads);
  c.num_channels = keys.integer("num_channels", d.num_channels);
  c.image_size = keys.integer("image_size", d.image_size);
  c.patch_size = keys.integer("patch_size", d.patch_size);
  c.layer_norm_eps = keys.number("layer_norm_eps", d.layer_norm_eps);
  c.hidden_act = keys.string("hidden_act", d.hidden_act);
  const double dropout = keys.number("attention_dropout", 0.0);
  if (dropout != 0.0)
    vit_config_error(origin, prefix + "attention_dropout", section["attention_dropout"].dump(),
                     "attention dropout is not implemented; set it to 0.0");
  c.validate(origin, prefix);
  return c;
}

}  // namespace kforge::vision
