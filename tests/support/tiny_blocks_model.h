// A tiny hand-written model with three blocks and uneven row counts, for the data-parallel and
// FSDP tests between two ranks (threads), and what it computes on one process.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>
#include <vector>

#include "kforge/sdk/model.h"

namespace kforge::test {

constexpr int64_t kTinyVocab = 11, kTinyDim = 6;

// root: embed [11, 6] and head [11, 6] (11 rows: 6 + 5 on two ranks); block 0: w [6, 6], g [6];
// block 1: a [5, 6], b [5, 6] (5 rows: 3 + 2); block 2: c [1, 6] (one row: rank 1 holds none).
class TinyModel final : public sdk::Model {
 public:
  /// bypass: block 1 is called directly instead of through run_block (a plugin's mistake).
  explicit TinyModel(bool bypass = false);
  /// Each forward adds 0.5 to b2_c in place, as a router updates its bias from the batch.
  bool mutate_in_forward = false;
  at::Tensor forward(const at::Tensor& tokens) override;
  std::vector<sdk::ModelBlock> blocks() const override;
  double flops_per_token(int64_t) const override { return 0; }
  int64_t num_params_estimate() const override { return 0; }

 private:
  bool bypass_;
  at::Tensor embed_, head_, w_, g_, a_, b_, c_;
};

/// Rank `rank`'s batch: int64 [2, 8].
at::Tensor tiny_tokens(int rank);
/// Cross-entropy of `logits` against rank `rank`'s labels.
at::Tensor tiny_loss(const at::Tensor& logits, int rank);
/// Each parameter's gradient of the mean of both ranks' losses, computed whole on one process,
/// with the parameter named `frozen` (if any) not requiring a gradient.
std::map<std::string, at::Tensor> tiny_reference_grads(const std::string& frozen = "");

}  // namespace kforge::test
