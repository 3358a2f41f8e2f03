// Muon: Newton–Schulz-orthogonalised momentum for matrices; the other parameters go to an internal AdamW.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "adamw.h"
#include "kforge/sdk/registrar.h"
#include "optimizer_config.h"
#include "per_param_optimizer.h"

namespace kforge::builtin::optimizers {

struct MuonOptions {
  CommonHyper hyper;       ///< lr and weight_decay for Muon; betas, eps, weight_decay for the AdamW part
  double momentum = 0.95;  ///< buf = momentum buf + g (no Nesterov)
  int64_t ns_steps = 5;
  double adam_lr = 0;      ///< base lr of the AdamW part; follows the same lr factor as Muon
};

/// Whether `name`/`tensor` is updated by Muon: >= 2-D, aspect ratio max(m,n)/min(m,n) <= 10 with
/// m = size(0), n = the product of the other dims, and no "embedding" / "output_head" in the name.
bool muon_eligible(const std::string& name, const at::Tensor& tensor);

/// Muon params: buf = mu buf + g; U = newton_schulz(buf) * sqrt(max(1, m/n)); p *= 1 - lr wd (decay
/// group); p -= lr U. State "<param>.momentum_buffer", ".step"; the AdamW part adds its own entries.
class Muon final : public PerParamOptimizer {
 public:
  Muon(const std::vector<sdk::NamedParameter>& params, const MuonOptions& options);

  void step() override;
  void set_lr_factor(double factor) override;
  sdk::StateDict state_dict() const override;
  void load_state_dict(const sdk::StateDict& state) override;

  const AdamW& adamw() const { return *adamw_; }

 private:
  void update(ParamState& s, const at::Tensor& grad) override;
  MuonOptions options_;
  std::unique_ptr<AdamW> adamw_;
};

/// The "muon" factory: the common keys plus muon_momentum, muon_ns_steps, muon_adam_lr (null: lr).
std::unique_ptr<sdk::Optimizer> make_muon(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params);

}  // namespace kforge::builtin::optimizers
