// GroupSharding: split parameters' checkpoints in place, their resume and the gradient norm over their groups.
#include "parallel/group_sharding.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "checkpoint/state_key.h"
#include "kforge/sdk/error.h"
#include "parallel/gradient_norm.h"

namespace kforge::parallel {

GroupSharding::GroupSharding(const sdk::Model& model, const std::vector<sdk::TensorShard>& shards,
                             const dist::Group& group, const std::string& empty)
    : group_(group) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : model.named_parameters(/*recurse=*/true))
    shapes.emplace(item.key(), item.value().sizes().vec());
  for (const sdk::TensorShard& shard : shards) {
    const auto it = shapes.find(shard.name);
    if (it == shapes.end()) {
      throw sdk::Error(
          fmt::format("model '{}' lists split parameter '{}', which it does not have", model.name(), shard.name));
    }
    if (shard.offsets.size() != it->second.size() || shard.global_shape.size() != it->second.size()) {
      throw sdk::Error(fmt::format("model '{}' places parameter '{}' of shape {} at offsets {} of shape {}",
                                   model.name(), shard.name, fmt::join(it->second, "x"), fmt::join(shard.offsets, ","),
                                   fmt::join(shard.global_shape, "x")));
    }
    mine_.emplace(shard.name, Local{shard, it->second});
    mine_names_.insert(shard.name);
  }
  if (mine_.empty()) throw sdk::Error(empty);
  std::string names;
  for (const std::string& name : mine_names_) names += name + "\n";
  for (const std::string& theirs : group.all_gather_strings(names)) {
    std::istringstream lines(theirs);
    for (std::string line; std::getline(lines, line);) all_names_.insert(line);
  }
}

std::optional<std::string> GroupSharding::owner(const std::string& key, const std::set<std::string>& names) {
  return checkpoint::state_owner(key, [&](const std::string& name) { return names.count(name) != 0; });
}

void GroupSharding::place(checkpoint::Snapshot& s, const std::string& key, const Local& local) const {
  const auto it = s.placements.find(key);
  if (it != s.placements.end()) {  // an FSDP shard of the local slice
    it->second.global_shape = local.shard.global_shape;
    for (size_t d = 0; d < it->second.offsets.size(); ++d) it->second.offsets[d] += local.shard.offsets[d];
    return;
  }
  if (!local.sliced()) return;  // a whole tensor of its own
  s.placements.emplace(key, checkpoint::Placement{local.shard.global_shape, local.shard.offsets});
}

void GroupSharding::trim(checkpoint::Snapshot& s) const {
  const bool shared_too = group_.rank() == 0;
  for (auto it = s.model.begin(); it != s.model.end();) {
    const auto local = mine_.find(it->first);
    if (local != mine_.end()) {
      place(s, "model/" + it->first, local->second);
    } else if (!shared_too) {
      s.placements.erase("model/" + it->first);
      it = s.model.erase(it);
      continue;
    }
    ++it;
  }
  for (auto it = s.optimizer.begin(); it != s.optimizer.end();) {
    const std::string key = "optimizer/" + it->first;
    const std::optional<std::string> param = owner(it->first, mine_names_);
    bool keep = shared_too;
    if (param) {
      const Local& local = mine_.at(*param);
      const bool shaped = s.placements.count(key) != 0 || it->second.sizes().vec() == local.shape;
      if (shaped) place(s, key, local);
      keep = keep || shaped || !local.sliced();  // a sliced tensor's whole entries are rank 0's
    }
    if (!keep) {
      s.placements.erase(key);
      it = s.optimizer.erase(it);
      continue;
    }
    ++it;
  }
}

checkpoint::Snapshot GroupSharding::localise(const checkpoint::Snapshot& whole) const {
  checkpoint::Snapshot s = whole;
  auto cut = [](at::Tensor t, const Local& local) {
    if (!local.sliced() || t.sizes().vec() != local.shard.global_shape) return t;
    for (int64_t d = 0; d < t.dim(); ++d) {
      t = t.narrow(d, local.shard.offsets[static_cast<size_t>(d)], local.shape[static_cast<size_t>(d)]);
    }
    return t;
  };
  for (auto it = s.model.begin(); it != s.model.end();) {
    if (all_names_.count(it->first) && !mine_.count(it->first)) {
      it = s.model.erase(it);
      continue;
    }
    if (const auto local = mine_.find(it->first); local != mine_.end()) it->second = cut(it->second, local->second);
    ++it;
  }
  for (auto it = s.optimizer.begin(); it != s.optimizer.end();) {
    const std::optional<std::string> param = owner(it->first, all_names_);
    if (param && !mine_.count(*param)) {
      it = s.optimizer.erase(it);
      continue;
    }
    if (param) it->second = cut(it->second, mine_.at(*param));
    ++it;
  }
  return s;
}

GroupSharding expert_sharding(const sdk::Model& model, const dist::Group& ep) {
  std::vector<sdk::TensorShard> shards;
  std::map<std::string, int64_t> dims;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) dims.emplace(item.key(), item.value().dim());
  for (const sdk::ExpertShard& e : model.expert_shards()) {
    const auto it = dims.find(e.name);
    std::vector<int64_t> offsets(static_cast<size_t>(it != dims.end() ? it->second : 0), 0);
    if (!offsets.empty()) offsets[0] = e.offset;
    shards.push_back({e.name, e.global_shape, offsets});
  }
  return GroupSharding(model, shards, ep,
                       fmt::format("[distributed] ep = {}: model '{}' holds no experts of its own "
                                   "(Model::expert_shards() is empty); it must keep its share of the experts when "
                                   "BuildContext::expert_parallel is set",
                                   ep.size(), model.name()));
}

GroupSharding tensor_sharding(const sdk::Model& model, const dist::Group& tp) {
  return GroupSharding(model, model.tensor_shards(), tp,
                       fmt::format("[distributed] tp = {}: model '{}' splits no parameter (Model::tensor_shards() is "
                                   "empty); it must keep its slices when BuildContext::tensor_parallel is set",
                                   tp.size(), model.name()));
}

double clip_sharded(const std::vector<sdk::NamedParameter>& params, const dist::Group& shard,
                    const std::vector<const GroupSharding*>& shardings, double max_norm, const dist::Group* stages) {
  at::NoGradGuard no_grad;
  const at::Device device = params.empty() ? at::Device(at::kCPU) : params.front().tensor.device();
  // [0]: parameters every rank of each group holds; [1 + i]: those shardings[i] splits.
  at::Tensor squares =
      at::zeros({static_cast<int64_t>(shardings.size()) + 1}, at::TensorOptions().dtype(at::kDouble).device(device));
  for (const auto& p : params) {
    if (!p.tensor.grad().defined()) continue;
    int64_t slot = 0;
    for (size_t i = 0; i < shardings.size() && slot == 0; ++i) {
      if (shardings[i]->holds(p.name)) slot = static_cast<int64_t>(i) + 1;
    }
    squares[slot] += squared_norm(p.tensor.grad());
  }
  shard.all_reduce(squares);
  double total = squares[0].item<double>();
  for (size_t i = 0; i < shardings.size(); ++i) {
    at::Tensor split = squares.narrow(0, static_cast<int64_t>(i) + 1, 1).clone();
    shardings[i]->group().all_reduce(split);
    total += split.item<double>();
  }
  if (stages != nullptr) {
    at::Tensor sum = at::tensor({total}, at::kDouble);
    stages->all_reduce(sum);
    total = sum.item<double>();
  }
  return scale_to_norm(params, std::sqrt(total), max_norm);
}

}  // namespace kforge::parallel
