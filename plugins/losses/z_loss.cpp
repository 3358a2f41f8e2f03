// PaLM logit z-loss (see z_loss.h).
#include "z_loss.h"

#include <ATen/ATen.h>

namespace kforge::builtin::losses {

at::Tensor z_loss(const at::Tensor& logits, double weight) {
  const at::Tensor wide = logits.to(at::promote_types(logits.scalar_type(), at::kFloat));
  return at::logsumexp(wide, {-1}).pow(2).mean() * weight;
}

}  // namespace kforge::builtin::losses
