// ExpertSharding: expert checkpoints in place, their resume and the gradient norm over expert-parallel ranks.
#include "train/expert_sharding.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "checkpoint/state_key.h"
#include "kforge/sdk/error.h"
#include "train/step.h"

namespace kforge::train {

ExpertSharding::ExpertSharding(const sdk::Model& model, const dist::Group& ep) : ep_(ep) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) shapes.emplace(item.key(), item.value().sizes().vec());
  for (const sdk::ExpertShard& shard : model.expert_shards()) {
    const auto it = shapes.find(shard.name);
    if (it == shapes.end()) {
      throw sdk::Error(fmt::format("model '{}' lists expert parameter '{}', which it does not have", model.name(),
                                   shard.name));
    }
    mine_.emplace(shard.name, Local{shard, it->second});
    mine_names_.insert(shard.name);
  }
  if (mine_.empty()) {
    throw sdk::Error(fmt::format(
        "[distributed] ep = {}: model '{}' holds no experts of its own (Model::expert_shards() is empty); it must "
        "keep its share of the experts when BuildContext::expert_parallel is set",
        ep.size(), model.name()));
  }
  std::string names;
  for (const std::string& name : mine_names_) names += name + "\n";
  for (const std::string& theirs : ep.all_gather_strings(names)) {
    std::istringstream lines(theirs);
    for (std::string line; std::getline(lines, line);) all_names_.insert(line);
  }
}

std::optional<std::string> ExpertSharding::owner(const std::string& key, const std::set<std::string>& names) {
  return checkpoint::state_owner(key, [&](const std::string& name) { return names.count(name) != 0; });
}

void ExpertSharding::place(checkpoint::Snapshot& s, const std::string& key, const at::Tensor& t,
                           const Local& local) const {
  const auto it = s.placements.find(key);
  if (it != s.placements.end()) {  // an FSDP shard of the local rows
    it->second.global_shape = local.shard.global_shape;
    it->second.offsets[0] += local.shard.offset;
    return;
  }
  if (!local.packed()) return;  // a whole tensor of its own
  std::vector<int64_t> offsets(static_cast<size_t>(t.dim()), 0);
  offsets[0] = local.shard.offset;
  s.placements.emplace(key, checkpoint::Placement{local.shard.global_shape, offsets});
}

void ExpertSharding::trim(checkpoint::Snapshot& s) const {
  const bool shared_too = ep_.rank() == 0;
  for (auto it = s.model.begin(); it != s.model.end();) {
    const auto local = mine_.find(it->first);
    if (local != mine_.end()) {
      place(s, "model/" + it->first, it->second, local->second);
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
      if (shaped) place(s, key, it->second, local);
      keep = keep || shaped || !local.packed();  // a packed tensor's whole entries are rank 0's
    }
    if (!keep) {
      s.placements.erase(key);
      it = s.optimizer.erase(it);
      continue;
    }
    ++it;
  }
}

checkpoint::Snapshot ExpertSharding::localise(const checkpoint::Snapshot& whole) const {
  checkpoint::Snapshot s = whole;
  auto cut = [](const at::Tensor& t, const Local& local) {
    if (!local.packed() || t.sizes().vec() != local.shard.global_shape) return t;
    return t.narrow(0, local.shard.offset, local.shape[0]);
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

double ExpertSharding::clip(const std::vector<sdk::NamedParameter>& params, const dist::Group& shard,
                            double max_norm) const {
  at::NoGradGuard no_grad;
  const at::Device device = params.empty() ? at::Device(at::kCPU) : params.front().tensor.device();
  at::Tensor squares = at::zeros({2}, at::TensorOptions().dtype(at::kDouble).device(device));  // shared, experts
  for (const auto& p : params) {
    if (p.tensor.grad().defined()) squares[holds(p.name) ? 1 : 0] += p.tensor.grad().to(at::kDouble).square().sum();
  }
  shard.all_reduce(squares);
  at::Tensor experts = squares.narrow(0, 1, 1).clone();
  ep_.all_reduce(experts);
  return scale_to_norm(params, std::sqrt(squares[0].item<double>() + experts.item<double>()), max_norm);
}

}  // namespace kforge::train
