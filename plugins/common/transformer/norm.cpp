// make_norm: builds the configured normalisation layer.
#include "norm.h"

#include <kforge/sdk/error.h>

#include "layer_norm.h"
#include "rms_norm.h"

namespace kforge::builtin::models {

std::shared_ptr<Norm> make_norm(const std::string& norm_type, int64_t dim, double eps, bool fused) {
  if (norm_type == "rmsnorm") return std::make_shared<RMSNorm>(dim, eps, fused);
  if (norm_type == "layernorm") return std::make_shared<LayerNorm>(dim, eps);
  throw sdk::ConfigError("[model] norm_type = \"" + norm_type + "\": must be \"rmsnorm\" or \"layernorm\"");
}

}  // namespace kforge::builtin::models
