// ReplicatedModel: plain data parallelism (dp_shard = 1, several ranks) whose gradient all-reduce
// overlaps the backward. When a block's backward is done in the step's last micro-batch, a copy of
// its gradients starts reducing over the group on Gloo's threads while the backward goes on;
// sync() waits, and averages synchronously whatever was not started or changed after its copy
// was taken (agreed over the ranks), so the result always equals average_gradients.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "dist/group.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/optimizer.h"
#include "parallel/block_backward_hooks.h"

namespace kforge::parallel {

class ReplicatedModel final : public BlockBackwardHooks {
 public:
  /// `params`: the model's trainable parameters; a step runs `micro_batches` forwards. `group` is held by
  /// reference and must outlive this object (a temporary group does not compile).
  ReplicatedModel(sdk::Model& model, const dist::Group& group, std::vector<sdk::NamedParameter> params,
                  int64_t micro_batches);
  ReplicatedModel(sdk::Model&, dist::Group&&, std::vector<sdk::NamedParameter>, int64_t) = delete;
  ~ReplicatedModel() override;
  ReplicatedModel(const ReplicatedModel&) = delete;
  ReplicatedModel& operator=(const ReplicatedModel&) = delete;

  /// model.forward(tokens); the step's last micro-batch arms the overlapped reduction.
  at::Tensor forward(const at::Tensor& tokens);
  /// Collective: every gradient becomes its mean over the group (after the last backward).
  void sync();
  /// Blocks whose reduction ran during the last backward and was used as it was (for tests).
  int64_t overlapped_blocks() const { return overlapped_; }

  void after_block_backward(size_t block) override;

 private:
  struct Bucket {
    std::vector<sdk::NamedParameter> params;  ///< the block's parameters
    std::vector<at::Tensor> sent;             ///< the gradients copied into `flat`
    std::vector<int64_t> versions;            ///< their version counters when copied
    at::Tensor flat;
    dist::PendingCollective pending;
    bool started = false;
    int calls = 0;  ///< backward hooks this step: a block run twice is reduced in sync()
  };
  /// Whether a started bucket's gradients are still the ones it sent.
  static bool unchanged(const Bucket& bucket);

  sdk::Model& model_;
  const dist::Group& group_;
  std::vector<Bucket> buckets_;             ///< one per model block
  std::vector<sdk::NamedParameter> root_;  ///< parameters in no block: reduced in sync()
  int64_t micro_batches_;
  int64_t forwards_ = 0;
  int64_t overlapped_ = 0;
  int64_t logged_ = -1;  ///< the count last logged (logged again when it changes)
};

}  // namespace kforge::parallel
