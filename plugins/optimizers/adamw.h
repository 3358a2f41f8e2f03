// AdamW: torch.optim.AdamW (no amsgrad) over two weight-decay groups, state keyed by name; fused
// (one multi-tensor pass, fused_adamw.h) or per tensor (adamw_update.h).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "adamw_update.h"
#include "kforge/sdk/registrar.h"

namespace kforge::builtin::optimizers {

struct AdamWOptions {
  AdamWHyper hyper;               ///< hyper.lr is the base lr; hyper.weight_decay applies to the decay group
  bool decay_embeddings = false;  ///< also decay embedding weights
  bool fused = true;              ///< [optimizer] fused: fused_adamw_update where it applies
};

/// State per parameter: "<name>.exp_avg", "<name>.exp_avg_sq", "<name>.step" (0-d int64). The tensors
/// state_dict() returns alias the live state (as torch's do): clone them to keep a snapshot.
/// A parameter without a .grad at a step (e.g. frozen) is skipped: no update, no decay, state kept.
class AdamW final : public sdk::Optimizer {
 public:
  /// Trainable parameters only (see sdk::split_weight_decay); names must be unique.
  AdamW(const std::vector<sdk::NamedParameter>& params, const AdamWOptions& options);

  void step() override;
  void set_lr_factor(double factor) override;
  double lr() const override { return lr_; }
  sdk::StateDict state_dict() const override;
  void load_state_dict(const sdk::StateDict& state) override;

  /// Names of the parameters that get weight decay, in update order.
  std::vector<std::string> decayed_names() const;
  /// Number of parameter tensors this optimizer updates.
  size_t size() const { return slots_.size(); }

 private:
  struct Slot {
    std::string name;
    at::Tensor param;
    at::Tensor exp_avg;
    at::Tensor exp_avg_sq;
    at::Tensor scratch;  ///< view into a shared buffer, holds the denominator during an update
    int64_t step = 0;
    bool decay = false;
  };
  void add_group(const std::vector<sdk::NamedParameter>& params, bool decay);
  void make_scratch_views();

  AdamWOptions options_;
  double lr_;
  std::vector<Slot> slots_;
  std::set<std::string> names_;
};

/// The "adamw" factory: [optimizer] lr, weight_decay, betas, eps and the plugin key decay_embeddings.
std::unique_ptr<sdk::Optimizer> make_adamw(const sdk::BuildContext& ctx, std::vector<sdk::NamedParameter> params);

}  // namespace kforge::builtin::optimizers
