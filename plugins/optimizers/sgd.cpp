// SGD in torch.optim.SGD's operation order (see sgd.h).
#include "sgd.h"

#include <ATen/ATen.h>

#include "kforge/sdk/error.h"

namespace kforge::builtin::optimizers {

Sgd::Sgd(const std::vector<sdk::NamedParameter>& params, const SgdOptions& options)
    : PerParamOptimizer("sgd", options.hyper.lr, sdk::split_weight_decay(params, options.hyper.decay_embeddings),
                        {{"momentum_buffer"}}),
      options_(options) {}

void Sgd::update(ParamState& s, const at::Tensor& grad) {
  at::Tensor d_p = grad;
  const double wd = s.decay ? options_.hyper.weight_decay : 0.0;
  if (wd != 0.0) d_p = d_p.add(s.param, wd);
  if (options_.momentum != 0.0) {
    at::Tensor& buf = s.slots[0];
    // torch starts the buffer as a copy of the first gradient, then buf = momentum buf + (1 - 0) d_p.
    if (s.step == 1) {
      buf.copy_(d_p);
    } else {
      buf.mul_(options_.momentum).add_(d_p, 1.0);
    }
    d_p = options_.nesterov ? d_p.add(buf, options_.momentum) : buf;
  }
  s.param.add_(d_p, -lr_);
}

std::unique_ptr<sdk::Optimizer> make_sgd(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params) {
  SgdOptions options;
  options.hyper = read_common_hyper(ctx.section, "sgd");
  options.momentum = ctx.section.get_float("sgd_momentum");
  options.nesterov = ctx.section.get_bool("sgd_nesterov");
  if (!(options.momentum >= 0.0)) {
    throw sdk::ConfigError("[optimizer] sgd_momentum = " + std::to_string(options.momentum) + ": must be >= 0");
  }
  if (options.nesterov && options.momentum == 0.0) {
    throw sdk::ConfigError("[optimizer] sgd_nesterov = true needs sgd_momentum > 0 (it is 0)");
  }
  return std::make_unique<Sgd>(params, options);
}

}  // namespace kforge::builtin::optimizers
