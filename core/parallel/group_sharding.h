// GroupSharding: what a model that splits some parameters over a process group (expert parallelism's ep, tensor
// parallelism's tp) changes for the host. Each rank of the group holds a slice of those parameters (or tensors of its
// own) and the same copy of everything else, so a checkpoint takes the shared tensors from the group's rank 0 and each
// rank's slices from that rank, placed in the logical tensors under their global names (it holds every value once,
// whatever layout resumes it); a resume cuts this rank's slices out of the whole tensors; the gradient norm adds every
// rank's slices once.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/snapshot.h"
#include "dist/group.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/optimizer.h"

namespace kforge::parallel {

class GroupSharding {
 public:
  /// `model`'s slices `shards` on this rank of `group` (held by reference). Collective over `group`: learns every
  /// rank's names. Throws sdk::Error when `shards` is empty (`empty` says why that is wrong) or names a parameter the
  /// model does not have.
  GroupSharding(const sdk::Model& model, const std::vector<sdk::TensorShard>& shards, const dist::Group& group,
                const std::string& empty);
  GroupSharding(const sdk::Model&, const std::vector<sdk::TensorShard>&, dist::Group&&, const std::string&) = delete;

  /// Whether `name` is a parameter of which this rank holds its own part.
  bool holds(const std::string& name) const { return mine_.count(name) != 0; }
  const dist::Group& group() const { return group_; }
  /// What this rank writes of `s` (its model and optimizer entries, with FSDP's placements if any): on ranks other than
  /// the group's 0 only its slices' entries are kept (a sliced tensor's whole state entries, such as a step count, come
  /// from rank 0); every entry shaped like its sliced parameter is placed in the logical tensor.
  void trim(checkpoint::Snapshot& s) const;
  /// A loaded snapshot of whole tensors -> the same with only this rank's slices.
  checkpoint::Snapshot localise(const checkpoint::Snapshot& whole) const;

 private:
  struct Local {
    sdk::TensorShard shard;
    std::vector<int64_t> shape;  ///< the parameter as this rank holds it
    bool sliced() const { return shape != shard.global_shape; }
  };
  /// The parameter in `names` an optimizer state key "<param>.<suffix>" belongs to.
  static std::optional<std::string> owner(const std::string& key, const std::set<std::string>& names);
  /// Places `key`'s entry (a slice of parameter `local`, or all of it) in the logical tensor.
  void place(checkpoint::Snapshot& s, const std::string& key, const Local& local) const;

  const dist::Group& group_;
  std::map<std::string, Local> mine_;
  std::set<std::string> mine_names_, all_names_;  ///< this rank's split parameters; every rank's
};

/// Expert parallelism: `model`'s expert_shards() over `ep`.
GroupSharding expert_sharding(const sdk::Model& model, const dist::Group& ep);
/// Tensor parallelism: `model`'s tensor_shards() over `tp`.
GroupSharding tensor_sharding(const sdk::Model& model, const dist::Group& tp);

/// clip_grad_norm over `params` (this rank's, or its FSDP shards over `shard`): one global norm in which parameters
/// no sharding holds count once and those a sharding holds count once per rank of its group, summed over `stages`
/// (pipeline parallelism: each holds other parameters) when given; returns it before clipping.
double clip_sharded(const std::vector<sdk::NamedParameter>& params, const dist::Group& shard,
                    const std::vector<const GroupSharding*>& shardings, double max_norm,
                    const dist::Group* stages = nullptr);

}  // namespace kforge::parallel
