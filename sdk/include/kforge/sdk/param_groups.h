// Weight-decay grouping shared by optimizer plugins.
#pragma once

#include <vector>

#include "kforge/sdk/export.h"
#include "kforge/sdk/optimizer.h"

namespace kforge::sdk {

struct DecayGroups {
  std::vector<NamedParameter> decay;     ///< >= 2-D weights
  std::vector<NamedParameter> no_decay;  ///< 1-D parameters, biases and (unless asked) embeddings
};

/// Splits trainable parameters: no weight decay for 1-D tensors, names containing "bias", and
/// names containing "embedding" unless decay_embeddings is true. Parameters that do not require
/// grad are dropped. Order within each group follows the input.
KFORGE_SDK_API DecayGroups split_weight_decay(const std::vector<NamedParameter>& params,
                                              bool decay_embeddings);

}  // namespace kforge::sdk
