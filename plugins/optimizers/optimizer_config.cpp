// The common [optimizer] values (see optimizer_config.h).
#include "optimizer_config.h"

#include <vector>

#include "kforge/sdk/error.h"

namespace kforge::optimizers {

CommonHyper read_common_hyper(const sdk::ConfigView& cfg, const std::string& optimizer) {
  const std::vector<double> betas = cfg.get_float_list("betas");
  if (betas.size() != 2) {
    throw sdk::ConfigError("[optimizer] betas: " + optimizer + " needs exactly two values, got " +
                           std::to_string(betas.size()));
  }
  CommonHyper h;
  h.lr = cfg.get_float("lr");
  h.weight_decay = cfg.get_float("weight_decay");
  h.beta1 = betas[0];
  h.beta2 = betas[1];
  h.eps = cfg.get_float("eps");
  h.decay_embeddings = cfg.get_bool("decay_embeddings");
  return h;
}

}  // namespace kforge::optimizers
