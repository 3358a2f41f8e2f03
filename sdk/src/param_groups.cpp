// Weight-decay grouping (see param_groups.h).
#include "kforge/sdk/param_groups.h"

namespace kforge::sdk {

DecayGroups split_weight_decay(const std::vector<NamedParameter>& params, bool decay_embeddings) {
  DecayGroups groups;
  for (const auto& p : params) {
    if (!p.tensor.requires_grad()) continue;
    const bool one_d = p.tensor.dim() < 2;
    const bool bias = p.name.find("bias") != std::string::npos;
    const bool embedding = !decay_embeddings && p.name.find("embedding") != std::string::npos;
    (one_d || bias || embedding ? groups.no_decay : groups.decay).push_back(p);
  }
  return groups;
}

}  // namespace kforge::sdk
