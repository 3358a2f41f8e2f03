// The whole-matrix optimizer on FSDP shards (see whole_matrix_optimizer.h).
#include "parallel/whole_matrix_optimizer.h"

#include <ATen/ATen.h>

#include <numeric>

namespace kforge::parallel {

WholeMatrixOptimizer::WholeMatrixOptimizer(const FullyShardedModel& fsdp, const Factory& make) : fsdp_(fsdp) {
  for (size_t i = 0; i < fsdp.shards().size(); ++i) {
    const at::Tensor& shard = fsdp.shards()[i].tensor;
    at::Tensor whole = at::empty(fsdp.whole_shape(i), shard.options()).requires_grad_(shard.requires_grad());
    whole_.push_back({fsdp.shards()[i].name, whole});
  }
  on_whole_parameters([] {});
  inner_ = make(whole_);
}

void WholeMatrixOptimizer::on_whole_parameters(const std::function<void()>& fn) {
  const std::vector<sdk::NamedParameter>& shards = fsdp_.shards();
  std::vector<size_t> all(shards.size());
  std::iota(all.begin(), all.end(), 0);
  std::vector<at::Tensor> rows;
  for (const auto& s : shards) rows.push_back(s.tensor.detach());
  const std::vector<at::Tensor> gathered = fsdp_.gather_rows(all, rows);
  at::NoGradGuard no_grad;
  std::vector<int64_t> versions;
  for (size_t i = 0; i < whole_.size(); ++i) {
    whole_[i].tensor.copy_(gathered[i]);
    versions.push_back(whole_[i].tensor._version());
  }
  fn();
  for (size_t i = 0; i < whole_.size(); ++i) {
    if (whole_[i].tensor._version() != versions[i]) shards[i].tensor.copy_(fsdp_.own_rows(i, whole_[i].tensor));
  }
}

void WholeMatrixOptimizer::step() {
  on_whole_parameters([this] {
    std::vector<size_t> params;
    std::vector<at::Tensor> grads;
    for (size_t i = 0; i < fsdp_.shards().size(); ++i) {  // a gradient is defined on every rank or on none
      const at::Tensor& grad = fsdp_.shards()[i].tensor.grad();
      if (!grad.defined()) continue;
      params.push_back(i);
      grads.push_back(grad);
    }
    const std::vector<at::Tensor> whole = fsdp_.gather_rows(params, grads);
    for (size_t k = 0; k < params.size(); ++k) whole_[params[k]].tensor.mutable_grad() = whole[k];
    inner_->step();
    for (const auto& p : whole_) p.tensor.mutable_grad() = at::Tensor();
  });
}

std::optional<size_t> WholeMatrixOptimizer::row_sliced(const std::string& key, const at::Tensor& t) const {
  const std::optional<size_t> param = fsdp_.shard_of_state(key);
  if (param && t.sizes().equals(fsdp_.whole_shape(*param))) return param;
  return std::nullopt;
}

sdk::StateDict WholeMatrixOptimizer::state_dict() const {
  sdk::StateDict state = inner_->state_dict();
  for (auto& [key, t] : state) {
    if (const std::optional<size_t> param = row_sliced(key, t)) t = fsdp_.own_rows(*param, t);
  }
  return state;
}

void WholeMatrixOptimizer::load_state_dict(const sdk::StateDict& state) {
  // Which entries are row slices is read from the optimizer's own entries: the same on every rank.
  std::vector<std::string> keys;
  std::vector<size_t> params;
  std::vector<at::Tensor> rows;
  for (const auto& [key, t] : inner_->state_dict()) {
    const std::optional<size_t> param = row_sliced(key, t);
    const auto given = state.find(key);
    if (!param || given == state.end()) continue;  // a missing entry is the optimizer's to report
    keys.push_back(key);
    params.push_back(*param);
    rows.push_back(given->second);
  }
  const std::vector<at::Tensor> gathered = fsdp_.gather_rows(params, rows);
  sdk::StateDict whole = state;
  for (size_t k = 0; k < keys.size(); ++k) whole[keys[k]] = gathered[k];
  on_whole_parameters([&] { inner_->load_state_dict(whole); });
}

void WholeMatrixOptimizer::use_eval_weights() {
  on_whole_parameters([this] { inner_->use_eval_weights(); });
}

void WholeMatrixOptimizer::use_train_weights() {
  on_whole_parameters([this] { inner_->use_train_weights(); });
}

}  // namespace kforge::parallel
