// Schedule-Free AdamW (Defazio & Mishchenko): trains at y = lerp(z, x, b1), evaluates at the average x.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "kforge/sdk/registrar.h"
#include "optimizer_config.h"
#include "per_param_optimizer.h"

namespace kforge::builtin::optimizers {

/// Per update k of a parameter (lr_k = lr * min(1, k / warmup_steps), 1 when warmup_steps is 0):
/// v = b2 v + (1 - b2) g^2; z -= lr_k g / (sqrt(v / (1 - b2^k)) + eps); z *= 1 - lr_k wd (decay group);
/// weight_sum += lr_k; x = lerp(x, z, lr_k (1 - b1) / weight_sum); param = lerp(z, x, b1).
/// State "<param>.z", ".x", ".exp_avg_sq", ".weight_sum" (0-d float64), ".step". Checkpoints hold x as
/// the parameter; after load_state_dict() the parameters hold x until use_train_weights().
class ScheduleFreeAdamW final : public PerParamOptimizer {
 public:
  ScheduleFreeAdamW(const std::vector<sdk::NamedParameter>& params, const CommonHyper& hyper, int64_t warmup_steps);

  void step() override;  ///< throws sdk::Error while the parameters hold the evaluation weights
  void load_state_dict(const sdk::StateDict& state) override;
  void use_eval_weights() override;
  void use_train_weights() override;
  bool holds_eval_weights() const { return eval_mode_; }

 private:
  void update(ParamState& s, const at::Tensor& grad) override;
  void set_train_point(ParamState& s) const;

  CommonHyper hyper_;
  int64_t warmup_steps_;
  bool eval_mode_ = false;
};

/// The "schedule_free_adamw" factory: the common keys plus schedule_free_warmup_steps.
std::unique_ptr<sdk::Optimizer> make_schedule_free_adamw(const sdk::BuildContext& ctx,
                                                         std::vector<sdk::NamedParameter> params);

}  // namespace kforge::builtin::optimizers
