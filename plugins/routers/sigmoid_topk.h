// SigmoidTopK: the DeepSeek-V3-style aux-loss-free router (KempnerForge sigmoid_topk).
#pragma once

#include <kforge/sdk/router.h>

#include <memory>

#include "bias_schedule.h"
#include "gate.h"

namespace kforge::builtin::routers {

struct SigmoidTopKSettings {
  double sequence_aux_loss_weight = 0.0;  ///< [model] moe_sequence_aux_loss_weight
  BiasSchedule bias_schedule = BiasSchedule::Constant;  ///< [model] moe_bias_schedule
};

/// scores = sigmoid(gate(x) + expert_bias); top-k of scores renormalised to sum 1. In training each
/// route() then updates expert_ema <- lerp(expert_ema, util, 0.01) (util = counts / (T K)) and
/// expert_bias += 0.001 * schedule(step) * (1/E - expert_ema), without gradient.
/// aux = w_seq * E * sum_i f_i P_i with P_i the mean over tokens of scores normalised over all
/// experts (0 when w_seq = 0); z = mean(logsumexp(gate(x))^2).
/// Parameters gate.weight (E, dim), expert_bias (E) (init 0); buffer expert_ema (E) (init 1/E).
class SigmoidTopK : public sdk::Router {
 public:
  static constexpr double kBiasUpdateRate = 0.001;
  static constexpr double kEmaDecay = 0.99;

  SigmoidTopK(const sdk::RouterSpec& spec, const SigmoidTopKSettings& settings);
  sdk::RouterOutput route(const at::Tensor& x) override;
  void set_step(int64_t step, int64_t max_steps) override;

 private:
  void update_bias(const at::Tensor& counts, int64_t tokens);

  sdk::RouterSpec spec_;
  SigmoidTopKSettings settings_;
  std::shared_ptr<Gate> gate_;
  at::Tensor expert_bias_, expert_ema_;
  double rate_factor_;
};

}  // namespace kforge::builtin::routers
