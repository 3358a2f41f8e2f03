// LibTorch's fused AdamW for device tensors (see device_adamw.h).
#include "device_adamw.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <map>
#include <tuple>

#include "kforge/sdk/error.h"

namespace kforge::builtin::optimizers {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define KFORGE_LIBTORCH_FUSED_ADAMW 1
#else
#define KFORGE_LIBTORCH_FUSED_ADAMW 0
#endif

bool device_fused_adamw_supports(const at::Tensor& param, const at::Tensor& grad, const at::Tensor& exp_avg) {
  return KFORGE_LIBTORCH_FUSED_ADAMW && !param.device().is_cpu() && at::isFloatingType(param.scalar_type()) &&
         !grad.is_sparse() && grad.device() == param.device() && grad.scalar_type() == param.scalar_type() &&
         exp_avg.scalar_type() == param.scalar_type() && exp_avg.device() == param.device();
}

void device_fused_adamw_update(const std::vector<FusedAdamWTensor>& tensors) {
#if KFORGE_LIBTORCH_FUSED_ADAMW
  // One kernel launch per (device, hyperparameters, step): the kernel takes its scalars once per list.
  using Key = std::tuple<std::string, double, double, double, double, double, int64_t>;
  std::map<Key, std::vector<const FusedAdamWTensor*>> groups;
  for (const FusedAdamWTensor& t : tensors) {
    const AdamWHyper& h = t.hyper;
    groups[{t.param.device().str(), h.lr, h.weight_decay, h.beta1, h.beta2, h.eps, t.step}].push_back(&t);
  }
  for (const auto& [key, group] : groups) {
    std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
    for (const FusedAdamWTensor* t : group) {
      params.push_back(t->param);
      grads.push_back(t->grad);
      exp_avgs.push_back(t->exp_avg);
      exp_avg_sqs.push_back(t->exp_avg_sq);
      // The kernel reads the (already counted) step from a float32 tensor on the device, as torch.optim keeps it.
      steps.push_back(at::full({}, static_cast<double>(t->step), t->param.options().dtype(at::kFloat)));
    }
    const AdamWHyper& h = group.front()->hyper;
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, h.lr, h.beta1, h.beta2,
                      h.weight_decay, h.eps, /*amsgrad=*/false, /*maximize=*/false);
  }
#else
  if (!tensors.empty()) {
    throw sdk::Error("adamw: this LibTorch has no fused device AdamW kernel (device_fused_adamw_supports is false)");
  }
#endif
}

}  // namespace kforge::builtin::optimizers
