#include "parallel/replicated_model.h"

#include <ATen/ATen.h>

#include <map>

#include "log/log.h"
#include "parallel/data_parallel.h"

namespace kforge::parallel {

ReplicatedModel::ReplicatedModel(sdk::Model& model, const dist::Group& group, std::vector<sdk::NamedParameter> params,
                                 int64_t micro_batches)
    : model_(model), group_(group), micro_batches_(micro_batches) {
  std::map<std::string, at::Tensor> by_name;
  for (const auto& p : params) by_name.emplace(p.name, p.tensor);
  for (const sdk::ModelBlock& block : model.blocks()) {
    buckets_.emplace_back();
    for (const std::string& name : block.params) {
      const auto it = by_name.find(name);
      if (it == by_name.end()) continue;  // not trainable
      buckets_.back().params.push_back({name, it->second});
      by_name.erase(it);
    }
  }
  for (const auto& p : params) {
    if (by_name.count(p.name)) root_.push_back(p);
  }
  model_.set_block_runner([this](size_t index, const at::Tensor& input, const sdk::Model::BlockFn& block) {
    const bool hook = at::GradMode::is_enabled() && input.requires_grad() && forwards_ == micro_batches_;
    return block(hook ? mark_block_input(input, *this, index) : input);
  });
}

ReplicatedModel::~ReplicatedModel() { model_.set_block_runner(nullptr); }

at::Tensor ReplicatedModel::forward(const at::Tensor& tokens) {
  if (at::GradMode::is_enabled()) ++forwards_;  // eval forwards are no micro-batches
  return model_.forward(tokens);
}

void ReplicatedModel::after_block_backward(size_t block) {
  Bucket& b = buckets_.at(block);
  if (++b.calls > 1) return;  // its gradients keep changing: sync() reduces them
  at::NoGradGuard no_grad;
  std::vector<at::Tensor> parts;
  for (const auto& p : b.params) {
    if (!p.tensor.requires_grad()) continue;  // frozen: no update anywhere
    at::Tensor param = p.tensor;
    if (!param.grad().defined()) param.mutable_grad() = at::zeros_like(param);  // not reached: zero
    if (!parts.empty() && param.grad().scalar_type() != parts.front().scalar_type()) return;  // sync() does it
    b.sent.push_back(param.grad());
    b.versions.push_back(param.grad()._version());
    parts.push_back(param.grad().reshape({-1}));
  }
  if (parts.empty()) return;
  b.flat = at::cat(parts);
  b.pending = group_.all_reduce_async(b.flat);
  b.started = true;
}

bool ReplicatedModel::unchanged(const Bucket& b) {
  size_t k = 0;
  for (const auto& p : b.params) {
    if (!p.tensor.requires_grad()) continue;
    const at::Tensor g = p.tensor.grad();
    if (k >= b.sent.size() || !g.defined() || !g.is_same(b.sent[k]) || g._version() != b.versions[k]) return false;
    ++k;
  }
  return k == b.sent.size();
}

void ReplicatedModel::sync() {
  forwards_ = 0;
  at::NoGradGuard no_grad;
  // Every rank must make the same collectives: a bucket one rank cannot use is redone everywhere.
  at::Tensor redo = at::zeros({static_cast<int64_t>(buckets_.size())}, at::kInt);
  for (size_t i = 0; i < buckets_.size(); ++i) {
    Bucket& b = buckets_[i];
    b.pending.wait();
    if (!b.started || b.calls != 1 || !unchanged(b)) redo[static_cast<int64_t>(i)] = 1;
  }
  group_.all_reduce(redo, dist::Reduce::Max);
  std::vector<sdk::NamedParameter> rest = root_;
  overlapped_ = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    Bucket& b = buckets_[i];
    if (redo[static_cast<int64_t>(i)].item<int>() != 0) {
      rest.insert(rest.end(), b.params.begin(), b.params.end());
    } else {
      b.flat.div_(static_cast<double>(group_.size()));
      int64_t offset = 0;
      for (at::Tensor& g : b.sent) {
        g.copy_(b.flat.narrow(0, offset, g.numel()).view_as(g));
        offset += g.numel();
      }
      ++overlapped_;
    }
    b.sent.clear();
    b.versions.clear();
    b.flat = at::Tensor();
    b.started = false;
    b.calls = 0;
  }
  average_gradients(group_, rest);
  if (overlapped_ != logged_) {
    log::get().info("[distributed] gradient all-reduce overlapped with the backward for {} of {} blocks", overlapped_,
                    buckets_.size());
    logged_ = overlapped_;
  }
}

}  // namespace kforge::parallel
