// The [optimizer] values every optimizer of this plugin reads (lr, weight_decay, betas, eps,
// decay_embeddings), and the refusal of a value an optimizer cannot use.
#pragma once

#include <string>

#include "kforge/sdk/config_view.h"

namespace kforge::builtin::optimizers {

struct CommonHyper {
  double lr = 0;
  double weight_decay = 0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool decay_embeddings = false;
};

/// Reads the common keys; throws sdk::ConfigError naming [optimizer] betas and its value unless it
/// holds two numbers in [0, 1).
CommonHyper read_common_hyper(const sdk::ConfigView& cfg, const std::string& optimizer);

/// Throws sdk::ConfigError "[optimizer] <key> = <value>: <allowed> (read by optimizer '<optimizer>')"
/// unless `ok`.
void require_value(bool ok, const std::string& optimizer, const std::string& key, const std::string& value,
                   const std::string& allowed);

/// A number as the config's TOML writes it: 0.0, 0.95, 1e-08.
std::string toml_number(double value);

}  // namespace kforge::builtin::optimizers
