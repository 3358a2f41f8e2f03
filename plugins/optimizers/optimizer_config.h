// The [optimizer] values every optimizer of this plugin reads: lr, weight_decay, betas, eps, decay_embeddings.
#pragma once

#include <string>

#include "kforge/sdk/config_view.h"

namespace kforge::optimizers {

struct CommonHyper {
  double lr = 0;
  double weight_decay = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool decay_embeddings = false;
};

/// Reads the common keys; throws sdk::ConfigError naming [optimizer] betas unless it holds two values.
CommonHyper read_common_hyper(const sdk::ConfigView& cfg, const std::string& optimizer);

}  // namespace kforge::optimizers
