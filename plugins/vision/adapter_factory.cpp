// make_adapter: [adapter] type -> adapter module.
#include "adapter_factory.h"

#include <kforge/sdk/error.h>

#include "attentional_pool_adapter.h"
#include "avgpool_adapter.h"
#include "linear_adapter.h"
#include "mlp_adapter.h"

namespace kforge::vision {

const std::vector<std::string>& adapter_types() {
  static const std::vector<std::string> types = {"mlp_2layer", "linear", "avgpool", "attentional_pool"};
  return types;
}

std::shared_ptr<sdk::Adapter> make_adapter(const AdapterOptions& o) {
  if (o.in_dim <= 0 || o.out_dim <= 0) {
    throw sdk::ConfigError("[adapter] " + o.type + ": in_dim = " + std::to_string(o.in_dim) +
                           " (the vision feature_dim)" + ", out_dim = " + std::to_string(o.out_dim) +
                           " (model.dim): both must be positive");
  }
  if (o.hidden_dim < 0) {
    throw sdk::ConfigError("[adapter] hidden_dim = " + std::to_string(o.hidden_dim) +
                           ": must be >= 0 (0 means model.dim)");
  }
  if (o.type == "mlp_2layer") return std::make_shared<MlpAdapter>(o.in_dim, o.out_dim, o.hidden_dim, o.activation);
  if (o.type == "linear") return std::make_shared<LinearAdapter>(o.in_dim, o.out_dim);
  if (o.type == "avgpool") return std::make_shared<AvgPoolAdapter>(o.in_dim, o.out_dim, o.pool_window);
  if (o.type == "attentional_pool") {
    return std::make_shared<AttentionalPoolAdapter>(o.in_dim, o.out_dim, o.pool_window, o.pool_heads);
  }
  std::string names;
  for (const auto& t : adapter_types()) names += (names.empty() ? "" : ", ") + t;
  throw sdk::ConfigError("[adapter] type = \"" + o.type + "\": unknown adapter (registered: " + names + ")");
}

}  // namespace kforge::vision
