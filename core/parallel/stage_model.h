// StageModel: the part of a model one pipeline-parallel rank trains ([distributed] pp > 1): its virtual stages' blocks,
// the embedding on the first stage, the final norm and head on the last, under the whole model's parameter names.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/snapshot.h"
#include "kforge/sdk/model.h"
#include "parallel/stage_split.h"

namespace kforge::parallel {

/// Wraps a whole model (built alike on every rank, so every stage starts from the one-rank model's weights) and holds
/// only this rank's part of it: named_parameters(), blocks() and tensor_shards() list that part, under the whole
/// model's names (checkpoints are stage-agnostic); the rest of the whole model's parameters are released (the
/// embedding stays, untrained, on the other stages: the whole model's forward() reads it first). The host's seams
/// (FSDP, activation checkpointing) wrap this model's blocks as any model's.
class StageModel final : public sdk::Model {
 public:
  /// This rank is `rank` of `ranks`; virtual stage v = chunk x ranks + rank runs the blocks `split` gives it. `whole`
  /// must declare KFORGE_CAP_PIPELINE.
  StageModel(std::shared_ptr<sdk::Model> whole, StageSplit split, int ranks, int rank);

  /// The next forward() runs chunk `chunk` of this rank on `input`, the previous virtual stage's output (undefined on
  /// virtual stage 0, which starts from the tokens).
  void set_pass(int chunk, at::Tensor input);
  /// The chunk's blocks -> its output (the logits on the last virtual stage, else the activation for the next).
  at::Tensor forward(const at::Tensor& tokens) override;
  /// This rank's blocks, chunk by chunk in forward order.
  std::vector<sdk::ModelBlock> blocks() const override { return blocks_; }
  std::vector<std::string> embedding_params() const override;
  double flops_per_token(int64_t seq_len) const override { return whole_->flops_per_token(seq_len); }
  int64_t num_params_estimate() const override { return whole_->num_params_estimate(); }
  void set_step(int64_t step, int64_t max_steps) override { whole_->set_step(step, max_steps); }
  std::vector<sdk::TensorShard> tensor_shards() const override;
  std::vector<std::pair<std::string, double>> step_metrics() override { return whole_->step_metrics(); }
  std::vector<std::pair<std::string, at::Tensor>> auxiliary_losses() override { return whole_->auxiliary_losses(); }
  void set_documents(const at::Tensor& doc_ids) override { whole_->set_documents(doc_ids); }
  int64_t max_seq_len() const override { return whole_->max_seq_len(); }

  /// Whether this rank holds the first (last) virtual stage.
  bool first() const { return rank_ == 0; }
  bool last() const { return rank_ == ranks_ - 1; }
  /// Whether `name` is a parameter of this rank's part.
  bool owns(const std::string& name) const { return owned_.count(name) != 0; }
  /// What this rank writes of `s`: on ranks other than the first stage's, only the optimizer entries of its own
  /// parameters (entries of no parameter, such as a global step count, come from the first stage).
  void trim(checkpoint::Snapshot& s) const;
  /// A loaded snapshot of the whole model -> the same with only this rank's parameters and their optimizer entries
  /// (any pp of the writing run).
  checkpoint::Snapshot localise(const checkpoint::Snapshot& whole) const;
  /// "pipeline stage 0 of 2: virtual stage 0: blocks 0-1; the embedding" style, for logs.
  std::string describe() const;

 private:
  /// The whole model's block runner: skips other stages' blocks, hands the chunk's input in, ends after its last block.
  at::Tensor run_whole_block(size_t index, const at::Tensor& input, const BlockFn& block);
  /// Registers `source`'s parameters this rank owns under `target` (whole sub-modules where it owns all of theirs).
  void mirror(torch::nn::Module& source, torch::nn::Module& target, const std::string& prefix);

  std::shared_ptr<sdk::Model> whole_;
  StageSplit split_;
  int ranks_, rank_;
  std::vector<sdk::ModelBlock> blocks_;
  std::map<size_t, size_t> local_;  ///< whole-model block index -> index in blocks_
  std::set<std::string> owned_;
  std::set<std::string> all_;  ///< every parameter name of the whole model
  int chunk_ = 0;
  at::Tensor input_, output_;
};

}  // namespace kforge::parallel
