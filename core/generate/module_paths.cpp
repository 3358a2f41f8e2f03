#include "generate/module_paths.h"

#include <fmt/format.h>

#include <array>
#include <utility>

#include "kforge/sdk/error.h"

namespace kforge::generate {
namespace {

/// Model-wide points and their modules.
constexpr std::array<std::pair<const char*, const char*>, 2> kWholeModules = {
    {{"embed", "tok_embeddings"}, {"final_norm", "norm"}}};
/// Per-block point suffixes and the module suffixes under "layers.N" ("" is the block itself). The norms' outputs
/// and the router's values are named by their KempnerForge paths already.
constexpr std::array<std::pair<const char*, const char*>, 8> kBlockModules = {
    {{".residual", ""},
     {".attn_out", ".attention"},
     {".mlp_out", ".mlp"},
     {".attention_norm", ".attention_norm"},
     {".mlp_norm", ".mlp_norm"},
     {".mlp.router.choices", ".mlp.router.choices"},
     {".mlp.router.weights", ".mlp.router.weights"},
     {".mlp.router.expert_counts", ".mlp.router.expert_counts"}}};

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string module_path_of_point(const std::string& point) {
  for (const auto& [name, module] : kWholeModules) {
    if (point == name) return module;
  }
  if (point.rfind("layers.", 0) != 0) return "";
  for (const auto& [suffix, module] : kBlockModules) {
    if (ends_with(point, suffix)) return point.substr(0, point.size() - std::string(suffix).size()) + module;
  }
  return "";
}

std::string point_of_module_path(const std::string& path, const std::vector<std::string>& points,
                                 const std::vector<std::string>& patterns) {
  if (path == kOutputModule) return kOutputModule;
  for (const std::string& point : points) {
    if (module_path_of_point(point) == path) return point;
  }
  std::vector<std::string> valid;
  for (const std::string& pattern : patterns) {
    const std::string module = module_path_of_point(pattern);
    if (!module.empty()) valid.push_back(module);
  }
  valid.push_back(kOutputModule);
  throw sdk::Error(fmt::format("--modules {}: the model has no module '{}' that can be captured. Its module paths are {} "
                               "({{layer}} a block index)",
                               path, path, fmt::join(valid, ", ")));
}

}  // namespace kforge::generate
