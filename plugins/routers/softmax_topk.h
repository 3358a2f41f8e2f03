// SoftmaxTopK: the Mixtral router (KempnerForge softmax_topk) with the Switch balance loss.
#pragma once

#include <kforge/sdk/router.h>

#include <memory>

#include "gate.h"

namespace kforge::builtin::routers {

/// probs = softmax(gate(x)); top-k of probs renormalised to sum 1; aux = E * sum_i f_i P_i;
/// z = mean(logsumexp(gate(x))^2). Parameter: gate.weight (E, dim).
class SoftmaxTopK : public sdk::Router {
 public:
  explicit SoftmaxTopK(const sdk::RouterSpec& spec);
  sdk::RouterOutput route(const at::Tensor& x) override;

 private:
  sdk::RouterSpec spec_;
  std::shared_ptr<Gate> gate_;
};

}  // namespace kforge::builtin::routers
