// ExpertChoiceFFN: one modality's expert group of MoMa (Lin et al. 2024 §2.2): expert-choice routing by sigmoid scores
// over that modality's tokens of the batch, Gumbel-sigmoid noise in training, each expert an MLP.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <vector>

#include "transformer/linear.h"
#include "transformer/mlp.h"
#include "transformer/model_config.h"

namespace kforge::vlm {

/// gate (experts, dim) and experts.{e} (the [model] activation's MLP, SwiGLU by default, at
/// computed_expert_ffn_hidden_dim()). Over N tokens: scores = sigmoid(gate(x)), in training with gumbel_noise
/// sigmoid(gate(x) + G' - G'') (G = -log(-log(U)), U uniform from the CPU generator); expert e picks the
/// tokens_per_expert(N) tokens of the highest scores in its column; a token's output is the sum over the experts that
/// picked it of score * expert(x), 0 when none did. Only the routed tokens count in N, draw noise and are picked.
class ExpertChoiceFFN : public torch::nn::Module {
 public:
  /// capacity_factor in (0, 1]: the fraction of the tokens each expert picks.
  ExpertChoiceFFN(const builtin::models::ModelConfig& config, int64_t experts, double capacity_factor,
                  bool gumbel_noise);
  /// x [N, dim] -> [N, dim]. The noisy score (in training) both picks the tokens and weighs the expert's output, as
  /// KempnerForge's router does. routed: bool [N], the tokens to route (a padded clip's real ones; undefined: all);
  /// the others' output is 0 and they count neither in the capacity nor in the coverage.
  at::Tensor forward(const at::Tensor& x, const at::Tensor& routed = {});
  /// clamp(ceil(capacity_factor * n), 1, n): the tokens each expert picks of n.
  int64_t tokens_per_expert(int64_t n) const;
  /// The fraction of the last forward's routed tokens that at least one expert picked, float 0-dim (0 when none was
  /// routed, undefined before a forward).
  const at::Tensor& last_coverage() const { return coverage_; }

 private:
  /// The routing of every token of x [N, dim] (N may be 0: zeros) -> [N, dim]; sets the coverage.
  at::Tensor route(const at::Tensor& x);

  double capacity_factor_;
  bool gumbel_noise_;
  std::shared_ptr<builtin::models::Linear> gate_;
  std::vector<std::shared_ptr<builtin::models::MLP>> experts_;
  at::Tensor coverage_;
};

}  // namespace kforge::vlm
