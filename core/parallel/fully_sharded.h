// FullyShardedModel: ZeRO-3 data parallelism (FSDP) over the dp_shard group, HSDP with
// dp_replicate. Each parameter's rows are split across the shard group; the model's own
// parameters hold data only while a unit (a model block, or the root: everything in no block) is
// gathered: before its forward, again before its backward, freed after each. The gather of the next unit (the next
// block in the forward, the previous one in the backward) is started before a block computes and finished when that
// unit is needed, so it overlaps the computation; at most one is in flight. A block's gradients are reduce-scattered
// to the shards as soon as its backward is done, without waiting: that reduce-scatter finishes while the next block's
// backward computes (at most one in flight, so at most one unit's gradients are held whole).
// Under [train] mixed_precision = "fp8" the weights of the model's "Float8Linear" modules (sdk::BuildContext::float8)
// are gathered in float8, as KempnerForge's enable_fsdp_float8_all_gather: the shard owners all-reduce the max of their
// shards' amaxes, so agree on the weight's tensorwise scale, send their rows as e4m3 codes (one byte an element) and
// every rank holds code / scale, whose float8 cast is the whole weight's (float8_codes.h). Nothing is kept between
// gathers: the scales are recomputed from the shards.
#pragma once

#include <ATen/core/Tensor.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "checkpoint/snapshot.h"
#include "dist/group.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/optimizer.h"
#include "parallel/block_backward_hooks.h"

namespace kforge::parallel {

class FullyShardedModel final : public BlockBackwardHooks {
 public:
  /// Shards every parameter of `model` over `shard` (the model must be identical on every rank,
  /// as after seeding) and installs the block runner; `replicate` is the HSDP replica group. Both groups
  /// are held by reference and must outlive this object (a temporary group does not compile). The parameters
  /// named in `whole` (ones the run never trains, such as a frozen vision encoder) are not sharded: they stay
  /// whole on every rank, are never gathered or freed, and are not in shards().
  FullyShardedModel(sdk::Model& model, const dist::Group& shard, const dist::Group& replicate,
                    const std::set<std::string>& whole = {});
  FullyShardedModel(sdk::Model&, const dist::Group&, dist::Group&&) = delete;
  FullyShardedModel(sdk::Model&, dist::Group&&, const dist::Group&) = delete;
  ~FullyShardedModel();
  FullyShardedModel(const FullyShardedModel&) = delete;
  FullyShardedModel& operator=(const FullyShardedModel&) = delete;

  /// This rank's shards, named as the model's parameters: what the optimizer updates.
  const std::vector<sdk::NamedParameter>& shards() const { return shards_; }
  /// The parameters held whole (the constructor's `whole`), identical on every rank: a checkpoint takes them from
  /// one rank.
  const std::vector<sdk::NamedParameter>& whole() const { return whole_; }

  /// A forward runs only some of the blocks (pipeline parallelism's chunks): the first `forwards` forwards together
  /// must run every block through run_block() (by default each forward must).
  void check_blocks_over(int64_t forwards) { forwards_to_check_ = forwards; }
  /// model.forward(tokens) with the root gathered (kept for the backward when it needs gradients).
  at::Tensor forward(const at::Tensor& tokens);
  /// After the last micro-batch's backward: reduces what is left (the root), frees every gathered
  /// unit and averages the shards' gradients over the replica group. Throws when a parameter held whole got a
  /// gradient (it would never be applied).
  void finish_backward();
  /// Global L2 norm of the shards' gradients over the shard group; scales them by
  /// min(1, max_norm / (norm + 1e-6)) (torch's clip_grad_norm_).
  double clip_gradients(double max_norm);
  void zero_grad();

  /// Placement of every tensor this rank writes to a checkpoint that is a slice of a larger one:
  /// the shards, and optimizer state entries "<param>.<suffix>" shaped like their shard.
  std::map<std::string, checkpoint::Placement> placements(const checkpoint::TensorMap& model,
                                                          const checkpoint::TensorMap& optimizer) const;
  /// Loads whole model tensors (every parameter and buffer) into the shards and buffers, with
  /// checkpoint::load_model_weights' checks.
  void load_model_weights(const checkpoint::Snapshot& snapshot);
  /// Whole optimizer state -> this rank's rows of the entries shaped like their parameter.
  checkpoint::TensorMap shard_optimizer_state(const checkpoint::TensorMap& whole) const;

  /// For optimizers that need whole matrices: rows[k] holds this rank's rows of a tensor shaped like
  /// parameter shards()[params[k]]; returns the whole tensors. One all-gather over the shard group
  /// per dtype: every rank of the group must call it with the same params and dtypes.
  std::vector<at::Tensor> gather_rows(const std::vector<size_t>& params, const std::vector<at::Tensor>& rows) const;
  /// This rank's rows of `whole`, a tensor shaped like parameter shards()[param].
  at::Tensor own_rows(size_t param, const at::Tensor& whole) const;
  /// The whole (unsharded) shape of parameter shards()[param].
  const std::vector<int64_t>& whole_shape(size_t param) const { return by_shard_[param]->shape; }
  /// The index in shards() of the parameter an optimizer state key "<param>.<suffix>" belongs to.
  std::optional<size_t> shard_of_state(const std::string& key) const;
  /// The bytes this rank has put into parameter gathers since construction: its rows in the parameters' dtype, a
  /// float8 weight's as one byte an element plus its 4-byte amax (all-reduced). gather_rows() is not counted.
  int64_t gathered_bytes() const { return gathered_bytes_; }

  /// Gathers the block's parameters back for its backward.
  void before_block_backward(size_t block) override;
  /// Reduce-scatters the block's gradients to the shards and frees its parameters.
  void after_block_backward(size_t block) override;

 private:
  struct Param {
    std::string name;
    at::Tensor param;  ///< the model's parameter: a view into its unit's gathered buffer
    at::Tensor shard;  ///< this rank's rows (its own storage)
    std::vector<int64_t> shape;
    int64_t rows = 0, chunk_rows = 0, row_numel = 0;
    int64_t first_row = 0, own_rows = 0;  ///< this rank's rows: rank x chunk_rows, clamped to rows
    int64_t gathered_offset = 0;          ///< in the unit's gathered buffer (size x chunk_rows rows)
    int64_t chunk_offset = 0;             ///< in one rank's chunk of the unit
    int64_t version = 0;                  ///< the parameter's version counter when gathered
    bool float8 = false;                  ///< a Float8Linear's weight: gathered as e4m3 codes
    int64_t codes_offset = 0;             ///< in the unit's gathered codes (size x chunk_rows rows), when float8
    /// How many rows rank `r` holds (the last ranks may hold fewer, or none).
    int64_t rows_of(int r) const { return std::min(rows - std::min(rows, r * chunk_rows), chunk_rows); }
  };
  struct Unit {
    std::string name;
    std::vector<Param> params;
    at::Tensor gathered;  ///< [size x chunk_numel], parameter-major; storage freed when released
    bool in_flight = false;           ///< a gather into `gathered` is in flight (its storage is allocated)
    dist::PendingCollective pending;  ///< that gather
    at::Tensor reduced;  ///< [chunk_numel]: this rank's summed gradient rows while a reduce-scatter is in flight
    dist::PendingCollective reducing;  ///< that reduce-scatter
    int64_t chunk_numel = 0;
    bool is_gathered = false;
    bool needs_reduce = false;  ///< ran forward with gradients; its gradients are not reduced yet
    int64_t codes_numel = 0;    ///< of `codes`: the float8 weights' size x chunk_rows rows, parameter-major
    at::Tensor codes;           ///< uint8: the float8 weights' gathered codes while their gather is in flight
    std::vector<at::Tensor> sent_codes;  ///< this rank's codes of them, until sent
    at::Tensor scales;                   ///< float32 [float8 weights]: the scales their owners agreed on
    dist::PendingCollective pending_codes;  ///< the codes' gather
  };

  /// Starts the all-gather of the unit's rows (nothing when it is gathered, empty or already in flight).
  void start_gather(size_t unit);
  /// Makes the unit's parameters whole: finishes its gather in flight, or gathers it now.
  void gather(size_t unit);
  /// Writes the float8 weights' gathered codes into their parameters as code / scale and drops the codes.
  void decode_codes(Unit& unit);
  /// Frees the unit's gathered buffer (first finishing, and dropping, a gather in flight); rows the model changed in
  /// place while it was gathered (e.g. a router's bias update in its forward) are first copied back into this rank's
  /// shards.
  void release(Unit& unit);
  /// Starts reduce-scattering the unit's gradients (the model's whole ones, then dropped) to the shards; first finishes
  /// the one in flight.
  void start_reduce(Unit& unit);
  /// Finishes the reduce-scatter in flight, if any, adding the unit's averaged rows to its shards' gradients.
  void finish_reduce();

  sdk::Model& model_;
  const dist::Group& shard_;
  const dist::Group& replicate_;
  std::vector<Unit> units_;  ///< blocks in forward order, then the root
  Unit* reducing_ = nullptr;     ///< the unit whose reduce-scatter is in flight
  std::set<size_t> blocks_run_;  ///< by the block runner, during the first forwards_to_check_ forwards
  int64_t forwards_to_check_ = 1, forwards_ = 0;
  bool in_backward_ = false;  ///< a block's backward ran since the last forward(): prefetch towards block 0
  bool runner_checked_ = false;
  std::vector<sdk::NamedParameter> shards_;
  std::vector<sdk::NamedParameter> whole_;
  std::vector<const Param*> by_shard_;         ///< the Param of each entry of shards_
  std::map<std::string, size_t> shard_index_;  ///< parameter name -> index in shards_
  int64_t gathered_bytes_ = 0;                 ///< gathered_bytes()
};

}  // namespace kforge::parallel
