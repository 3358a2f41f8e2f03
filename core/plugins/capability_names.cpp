// capability_names: KFORGE_CAP_* flags to words.
#include "plugins/capability_names.h"

#include <fmt/format.h>

#include "kforge/sdk/abi.h"

namespace kforge::plugins {

std::vector<std::string> capability_names(uint32_t flags) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {KFORGE_CAP_NEEDS_WHOLE_MATRICES, "needs_whole_matrices"},
      {KFORGE_CAP_HAS_EVAL_WEIGHTS, "has_eval_weights"},
      {KFORGE_CAP_LLAMA_LAYOUT, "llama_layout"},
      {KFORGE_CAP_DOCUMENT_MASK, "document_mask"},
      {KFORGE_CAP_EMBEDDING_PREFIX, "embedding_prefix"},
      {KFORGE_CAP_EXPERT_PARALLEL, "expert_parallel"},
      {KFORGE_CAP_TENSOR_PARALLEL, "tensor_parallel"},
      {KFORGE_CAP_PIPELINE, "pipeline"},
      {KFORGE_CAP_FLOAT8, "float8"},
      {KFORGE_CAP_TEXT_RESIDUAL, "text_residual"},
      {KFORGE_CAP_POOLS_PATCH_GRID, "pools_patch_grid"},
  };
  std::vector<std::string> out;
  for (uint32_t bit = 1; bit != 0; bit <<= 1) {
    if ((flags & bit) == 0) continue;
    std::string name = fmt::format("{:#x}", bit);
    for (const auto& [flag, word] : kNames) {
      if (flag == bit) name = word;
    }
    out.push_back(std::move(name));
  }
  return out;
}

}  // namespace kforge::plugins
