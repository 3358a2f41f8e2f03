// Lion: p *= 1 - lr wd; p -= lr sign(b1 m + (1 - b1) g); m = b2 m + (1 - b2) g. State "<param>.exp_avg".
#pragma once

#include <memory>
#include <vector>

#include "kforge/sdk/registrar.h"
#include "optimizer_config.h"
#include "per_param_optimizer.h"

namespace kforge::builtin::optimizers {

class Lion final : public PerParamOptimizer {
 public:
  Lion(const std::vector<sdk::NamedParameter>& params, const CommonHyper& hyper);

 private:
  void update(ParamState& s, const at::Tensor& grad) override;
  CommonHyper hyper_;
};

/// The "lion" factory: [optimizer] lr, weight_decay, betas and decay_embeddings (eps is unused).
std::unique_ptr<sdk::Optimizer> make_lion(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params);

}  // namespace kforge::builtin::optimizers
