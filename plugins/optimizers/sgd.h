// SGD with momentum as torch.optim.SGD (dampening 0, coupled weight decay g += wd p). State "<param>.momentum_buffer".
#pragma once

#include <memory>
#include <vector>

#include "kforge/sdk/registrar.h"
#include "optimizer_config.h"
#include "per_param_optimizer.h"

namespace kforge::builtin::optimizers {

struct SgdOptions {
  CommonHyper hyper;  ///< lr, weight_decay and decay_embeddings are used
  double momentum = 0.9;
  bool nesterov = false;
};

class Sgd final : public PerParamOptimizer {
 public:
  Sgd(const std::vector<sdk::NamedParameter>& params, const SgdOptions& options);

 private:
  void update(ParamState& s, const at::Tensor& grad) override;
  SgdOptions options_;
};

/// The "sgd" factory: [optimizer] lr, weight_decay, decay_embeddings and plugin keys sgd_momentum (>= 0),
/// sgd_nesterov (needs sgd_momentum > 0).
std::unique_ptr<sdk::Optimizer> make_sgd(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params);

}  // namespace kforge::builtin::optimizers
