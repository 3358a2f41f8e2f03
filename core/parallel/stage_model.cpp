// StageModel: a pipeline stage's part of a whole model.
#include "parallel/stage_model.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "checkpoint/state_key.h"
#include "kforge/sdk/error.h"

namespace kforge::parallel {
namespace {

// Thrown by the whole model's block runner after a chunk's last block, caught by StageModel::forward: the rest of the
// whole model's forward (later stages' blocks, the head) does not run here.
struct ChunkDone {};

}  // namespace

StageModel::StageModel(std::shared_ptr<sdk::Model> whole, StageSplit split, int ranks, int rank)
    : whole_(std::move(whole)), split_(std::move(split)), ranks_(ranks), rank_(rank) {
  const std::vector<sdk::ModelBlock> all = whole_->blocks();
  if (static_cast<int64_t>(all.size()) != split_.first.back()) {
    throw sdk::Error(fmt::format("pipeline parallelism: the stage split covers {} blocks, the model has {}",
                                 split_.first.back(), all.size()));
  }
  std::set<std::string> in_blocks;
  for (const sdk::ModelBlock& block : all) in_blocks.insert(block.params.begin(), block.params.end());
  for (int v = rank_; v < split_.stages(); v += ranks_) {
    for (int64_t i = split_.begin(v); i < split_.end(v); ++i) {
      const sdk::ModelBlock& block = all[static_cast<size_t>(i)];
      local_[static_cast<size_t>(i)] = blocks_.size();
      blocks_.push_back(block);
      owned_.insert(block.params.begin(), block.params.end());
    }
  }
  const std::vector<std::string> embedding_list = whole_->embedding_params();
  const std::set<std::string> embedding(embedding_list.begin(), embedding_list.end());
  for (const auto& item : whole_->named_parameters(/*recurse=*/true)) {
    all_.insert(item.key());
    if (!in_blocks.count(item.key()) && (embedding.count(item.key()) ? first() : last())) owned_.insert(item.key());
  }
  mirror(*whole_, *this, "");
  // What this rank does not train: the embedding, which the whole model's forward reads on every stage, stays without
  // a gradient; every other parameter gives its memory back.
  at::NoGradGuard no_grad;
  for (auto& item : whole_->named_parameters(/*recurse=*/true)) {
    if (owned_.count(item.key())) continue;
    item.value().set_requires_grad(false);
    if (!embedding.count(item.key())) item.value().set_data(at::empty({0}, item.value().options()));
  }
  // The whole model's seams lead to this model's, which the host's (FSDP, activation checkpointing) wrap.
  whole_->set_block_runner([this](size_t index, const at::Tensor& input, const BlockFn& block) {
    return run_whole_block(index, input, block);
  });
  whole_->set_module_runner([this](size_t block, const std::string& module, const at::Tensor& input,
                                   const BlockFn& fn) { return run_module(local_.at(block), module, input, fn); });
  whole_->set_side_output_sink([this](const at::Tensor& value) { block_side_output(value); });
}

void StageModel::mirror(torch::nn::Module& source, torch::nn::Module& target, const std::string& prefix) {
  for (auto& item : source.named_parameters(/*recurse=*/false)) {
    if (owned_.count(prefix + item.key())) {
      target.register_parameter(item.key(), item.value(), item.value().requires_grad());
    }
  }
  for (auto& item : source.named_buffers(/*recurse=*/false)) {  // a partly-owned module's own: the first stage's
    if (first()) target.register_buffer(item.key(), item.value());
  }
  for (const auto& child : source.named_children()) {
    const std::string child_prefix = prefix + child.key() + ".";
    size_t params = 0, mine = 0;
    for (const auto& item : child.value()->named_parameters(/*recurse=*/true)) {
      ++params;
      mine += owned_.count(child_prefix + item.key());
    }
    if (mine == 0) continue;
    if (mine == params) {
      target.register_module(child.key(), child.value());
      continue;
    }
    auto holder = std::make_shared<torch::nn::Module>(child.value()->name());
    target.register_module(child.key(), holder);
    mirror(*child.value(), *holder, child_prefix);
  }
}

void StageModel::set_pass(int chunk, at::Tensor input) {
  chunk_ = chunk;
  input_ = std::move(input);
}

at::Tensor StageModel::run_whole_block(size_t index, const at::Tensor& input, const BlockFn& block) {
  const int v = chunk_ * ranks_ + rank_;
  const auto i = static_cast<int64_t>(index);
  if (i < split_.begin(v)) return i + 1 == split_.begin(v) ? input_ : input;  // earlier stages' blocks: not run here
  if (i >= split_.end(v)) {
    throw sdk::Error(fmt::format("pipeline parallelism: virtual stage {} reached block {} past its last ({})", v, i,
                                 split_.end(v) - 1));
  }
  at::Tensor out = run_block(local_.at(index), input, block);
  if (i + 1 == split_.end(v) && v + 1 < split_.stages()) {
    output_ = out;
    throw ChunkDone{};
  }
  return out;
}

at::Tensor StageModel::forward(const at::Tensor& tokens) {
  try {
    return whole_->forward(tokens);
  } catch (const ChunkDone&) {
    at::Tensor out = std::move(output_);
    output_ = at::Tensor();
    return out;
  }
}

std::vector<std::string> StageModel::embedding_params() const {
  std::vector<std::string> out;
  for (const std::string& name : whole_->embedding_params()) {
    if (owns(name)) out.push_back(name);
  }
  return out;
}

std::vector<sdk::TensorShard> StageModel::tensor_shards() const {
  std::vector<sdk::TensorShard> out;
  for (const sdk::TensorShard& shard : whole_->tensor_shards()) {
    if (owns(shard.name)) out.push_back(shard);
  }
  return out;
}

void StageModel::trim(checkpoint::Snapshot& s) const {
  if (first()) return;
  for (auto it = s.optimizer.begin(); it != s.optimizer.end();) {
    const auto param = checkpoint::state_owner(it->first, [&](const std::string& name) { return owns(name); });
    if (param) {
      ++it;
      continue;
    }
    s.placements.erase("optimizer/" + it->first);
    it = s.optimizer.erase(it);
  }
}

checkpoint::Snapshot StageModel::localise(const checkpoint::Snapshot& whole) const {
  checkpoint::Snapshot s = whole;
  const auto buffers = named_buffers(/*recurse=*/true);
  for (auto it = s.model.begin(); it != s.model.end();) {
    it = owns(it->first) || buffers.contains(it->first) ? std::next(it) : s.model.erase(it);
  }
  for (auto it = s.optimizer.begin(); it != s.optimizer.end();) {
    const auto param =
        checkpoint::state_owner(it->first, [&](const std::string& name) { return all_.count(name) != 0; });
    it = !param || owns(*param) ? std::next(it) : s.optimizer.erase(it);
  }
  return s;
}

std::string StageModel::describe() const {
  std::string out = fmt::format("pipeline stage {} of {}: ", rank_, ranks_);
  for (int v = rank_; v < split_.stages(); v += ranks_) {
    out +=
        fmt::format("{}virtual stage {}: blocks {}-{}", v == rank_ ? "" : "; ", v, split_.begin(v), split_.end(v) - 1);
  }
  if (first()) out += "; the embedding";
  if (last()) out += "; the final norm and head";
  return out;
}

}  // namespace kforge::parallel
