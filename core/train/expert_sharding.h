// ExpertSharding: what expert parallelism ([distributed] ep > 1) changes for the host. Each rank of an ep group holds
// its share of every MoE layer's experts and the same copy of everything else, so a checkpoint takes the shared
// tensors from ep rank 0 and each rank's experts from that rank, placed in the logical tensors under their global
// names (it holds every expert once, whatever ep resumes it); a resume takes this rank's experts out of the whole
// tensors; the gradient norm adds every rank's experts once.
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

namespace kforge::train {

class ExpertSharding {
 public:
  /// `model`'s expert_shards() on this rank of `ep` (held by reference). Collective over `ep`: learns every rank's
  /// expert names. Throws sdk::Error when the model lists none (it ignored BuildContext::expert_parallel) or names a
  /// parameter it does not have.
  ExpertSharding(const sdk::Model& model, const dist::Group& ep);
  ExpertSharding(const sdk::Model&, dist::Group&&) = delete;

  /// Whether `name` is a parameter of which this rank holds its own part.
  bool holds(const std::string& name) const { return mine_.count(name) != 0; }
  /// What this rank writes of `s` (its model and optimizer entries, with FSDP's placements if any): on ep ranks
  /// other than 0 only its experts' entries are kept (a packed tensor's whole state entries, such as a step count,
  /// come from rank 0); every expert entry shaped like its parameter is placed in the logical tensor.
  void trim(checkpoint::Snapshot& s) const;
  /// A loaded snapshot of whole tensors -> the same with only this rank's experts (packed ones cut to its rows).
  checkpoint::Snapshot localise(const checkpoint::Snapshot& whole) const;
  /// clip_grad_norm over `params` (this rank's, or its FSDP shards over `shard`): one global norm in which the
  /// shared parameters count once and every rank's experts once; returns it before clipping.
  double clip(const std::vector<sdk::NamedParameter>& params, const dist::Group& shard, double max_norm) const;

 private:
  struct Local {
    sdk::ExpertShard shard;
    std::vector<int64_t> shape;  ///< the parameter as this rank holds it
    bool packed() const { return shape != shard.global_shape; }
  };
  /// The parameter in `names` an optimizer state key "<param>.<suffix>" belongs to.
  static std::optional<std::string> owner(const std::string& key, const std::set<std::string>& names);
  /// Places `key`'s entry (a slice of parameter `local`, or all of it) in the logical tensor.
  void place(checkpoint::Snapshot& s, const std::string& key, const at::Tensor& t, const Local& local) const;

  const dist::Group& ep_;
  std::map<std::string, Local> mine_;
  std::set<std::string> mine_names_, all_names_;  ///< this rank's expert parameters; every rank's
};

}  // namespace kforge::train
