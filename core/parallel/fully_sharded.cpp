#include "parallel/fully_sharded.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <cmath>
#include <set>

#include "checkpoint/model_loading.h"
#include "checkpoint/state_key.h"
#include "kforge/sdk/error.h"
#include "parallel/data_parallel.h"
#include "parallel/float8_codes.h"
#include "parallel/gradient_norm.h"

namespace kforge::parallel {
namespace {

// A unit's parameters, and the views of them autograd saves for the backward, all share the
// gathered buffer's storage: it is emptied in place and refilled in place, never replaced.
void free_storage(const at::Tensor& t) { t.storage().unsafeGetStorageImpl()->reset(); }

void allocate_storage(const at::Tensor& t) {
  const size_t bytes = static_cast<size_t>(t.numel()) * t.element_size();
  c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));  // the device's own allocator
  storage->set_nbytes(bytes);
}

}  // namespace

FullyShardedModel::FullyShardedModel(sdk::Model& model, const dist::Group& shard, const dist::Group& replicate,
                                     const std::set<std::string>& whole)
    : model_(model), shard_(shard), replicate_(replicate) {
  at::NoGradGuard no_grad;
  std::set<std::string> in_blocks;
  for (const sdk::ModelBlock& block : model.blocks()) {
    units_.push_back(Unit{block.name});
    for (const std::string& name : block.params) {
      if (!whole.count(name)) units_.back().params.push_back({name});
      in_blocks.insert(name);
    }
  }
  units_.push_back(Unit{"root"});
  std::set<std::string> float8;  // torchao's Float8Linear modules' weights (sdk::BuildContext::float8)
  for (const auto& item : model.named_modules("", /*include_self=*/false)) {
    if (item.value()->name() == "Float8Linear") float8.insert(item.key() + ".weight");
  }
  std::map<std::string, at::Tensor> by_name;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) {
    by_name.emplace(item.key(), item.value());
    if (whole.count(item.key())) {
      whole_.push_back({item.key(), item.value()});
    } else if (!in_blocks.count(item.key())) {
      units_.back().params.push_back({item.key()});
    }
  }
  for (const std::string& name : whole) {
    if (!by_name.count(name)) {
      throw sdk::Error(fmt::format("FSDP: parameter '{}', to be held whole, is not one of the model's", name));
    }
  }
  const int64_t size = shard.size();
  for (Unit& unit : units_) {
    int64_t gathered = 0;
    for (Param& p : unit.params) {
      const auto it = by_name.find(p.name);
      if (it == by_name.end()) {
        throw sdk::Error(fmt::format("FSDP: model block '{}' names parameter '{}', which the model does not have",
                                     unit.name, p.name));
      }
      p.param = it->second;
      if (p.param.dim() == 0) {
        throw sdk::Error(fmt::format("FSDP: parameter '{}' is a scalar; dp_shard > 1 shards parameters by rows", p.name));
      }
      p.shape = p.param.sizes().vec();
      p.rows = p.shape[0];
      p.row_numel = p.param.numel() / std::max<int64_t>(p.rows, 1);
      p.chunk_rows = (p.rows + size - 1) / size;
      p.first_row = std::min(p.rows, shard.rank() * p.chunk_rows);
      p.own_rows = std::min(p.rows - p.first_row, p.chunk_rows);
      if (p.param.scalar_type() != unit.params.front().param.scalar_type()) {
        throw sdk::Error(fmt::format("FSDP: block '{}' mixes dtypes ('{}' is {}, '{}' is {}); a block's parameters "
                                     "are gathered in one buffer",
                                     unit.name, p.name, c10::toString(p.param.scalar_type()), unit.params.front().name,
                                     c10::toString(unit.params.front().param.scalar_type())));
      }
      p.chunk_offset = unit.chunk_numel;
      p.gathered_offset = gathered;
      p.float8 = float8.count(p.name) != 0;
      if (p.float8) {
        p.codes_offset = unit.codes_numel;
        unit.codes_numel += size * p.chunk_rows * p.row_numel;
      }
      unit.chunk_numel += p.chunk_rows * p.row_numel;
      gathered += size * p.chunk_rows * p.row_numel;
    }
    if (unit.params.empty()) continue;
    // One buffer per unit; every parameter of the unit becomes a view into it.
    unit.gathered = at::empty({gathered}, unit.params.front().param.options().requires_grad(false));
    for (Param& p : unit.params) {
      at::Tensor view = unit.gathered.narrow(0, p.gathered_offset, p.param.numel()).view(p.shape);
      view.copy_(p.param);
      p.shard = p.param.detach().narrow(0, p.first_row, p.own_rows).clone().requires_grad_(p.param.requires_grad());
      p.param.set_data(view);
      p.version = p.param._version();
      shard_index_.emplace(p.name, shards_.size());
      shards_.push_back({p.name, p.shard});
      by_shard_.push_back(&p);
    }
    unit.is_gathered = true;
    release(unit);
  }
  model_.set_block_runner([this](size_t index, const at::Tensor& input, const sdk::Model::BlockFn& block) {
    if (index + 1 >= units_.size()) {
      throw sdk::Error(fmt::format("FSDP: the model ran block {}, but blocks() lists {}", index, units_.size() - 1));
    }
    blocks_run_.insert(index);
    gather(index);
    // The next block's gather overlaps this one's forward (a recomputation in the backward prefetches nothing).
    if (!in_backward_ && index + 2 < units_.size()) start_gather(index + 1);
    const bool backward = at::GradMode::is_enabled();
    const at::Tensor in = backward && input.requires_grad() ? mark_block_input(input, *this, index) : input;
    at::Tensor out = block(in);
    if (backward && out.requires_grad()) {
      out = mark_block_output(out, *this, index);
      units_[index].needs_reduce = true;  // by its backward hook, or (input without grad) finish_backward()
    }
    release(units_[index]);
    return out;
  });
}

FullyShardedModel::~FullyShardedModel() { model_.set_block_runner(nullptr); }

void FullyShardedModel::start_gather(size_t index) {
  Unit& unit = units_[index];
  if (unit.is_gathered || unit.params.empty() || unit.in_flight) return;
  at::NoGradGuard no_grad;
  allocate_storage(unit.gathered);
  if (unit.codes_numel > 0) {
    // The float8 weights' owners agree on each one's amax, the max of their shards' (bf16) amaxes.
    std::vector<at::Tensor> amaxes;
    for (const Param& p : unit.params) {
      if (p.float8) amaxes.push_back(bf16_amax(p.shard));
    }
    at::Tensor amax = at::stack(amaxes);
    shard_.all_reduce(amax, dist::Reduce::Max);
    gathered_bytes_ += static_cast<int64_t>(amax.nbytes());
    unit.scales = e4m3_scale(amax);
    unit.codes = at::empty({unit.codes_numel}, unit.gathered.options().dtype(at::kByte));
  }
  // Every rank's rows land straight in the parameters' place in the unit's buffer (a float8 weight's codes in theirs).
  std::vector<at::Tensor> mine;
  std::vector<std::vector<at::Tensor>> into(static_cast<size_t>(shard_.size())), codes_into = into;
  int64_t scale = 0;
  for (const Param& p : unit.params) {
    if (p.float8) {
      unit.sent_codes.push_back(encode_e4m3(p.shard, unit.scales[scale++]));
    } else {
      mine.push_back(p.shard.reshape({-1}));
    }
    for (int r = 0; r < shard_.size(); ++r) {
      const int64_t rows = r * p.chunk_rows * p.row_numel, numel = p.rows_of(r) * p.row_numel;
      if (p.float8) {
        codes_into[static_cast<size_t>(r)].push_back(unit.codes.narrow(0, p.codes_offset + rows, numel));
      } else {
        into[static_cast<size_t>(r)].push_back(unit.gathered.narrow(0, p.gathered_offset + rows, numel));
      }
    }
  }
  for (const auto* sent : {&mine, &unit.sent_codes}) {
    for (const at::Tensor& t : *sent) gathered_bytes_ += static_cast<int64_t>(t.nbytes());
  }
  unit.pending = shard_.all_gather_pieces_async(mine, into);
  if (unit.codes_numel > 0) unit.pending_codes = shard_.all_gather_pieces_async(unit.sent_codes, codes_into);
  unit.in_flight = true;
}

void FullyShardedModel::gather(size_t index) {
  Unit& unit = units_[index];
  if (unit.is_gathered || unit.params.empty()) return;
  start_gather(index);
  unit.pending.wait();
  unit.pending_codes.wait();
  unit.in_flight = false;
  decode_codes(unit);
  for (Param& p : unit.params) p.version = p.param._version();
  unit.is_gathered = true;
}

void FullyShardedModel::decode_codes(Unit& unit) {
  if (unit.codes_numel == 0) return;
  at::NoGradGuard no_grad;
  int64_t scale = 0;
  for (const Param& p : unit.params) {
    if (!p.float8) continue;
    const at::Tensor codes = unit.codes.narrow(0, p.codes_offset, p.param.numel());
    unit.gathered.narrow(0, p.gathered_offset, p.param.numel()).copy_(decode_e4m3(codes, unit.scales[scale++]));
  }
  unit.codes = at::Tensor();
  unit.sent_codes.clear();
}

void FullyShardedModel::release(Unit& unit) {
  if (unit.in_flight) {  // a prefetch nothing used: every rank finishes it, in the order it was started
    unit.pending.wait();
    unit.pending_codes.wait();
    unit.codes = at::Tensor();
    unit.sent_codes.clear();
    unit.in_flight = false;
    free_storage(unit.gathered);
    return;
  }
  if (!unit.is_gathered) return;
  at::NoGradGuard no_grad;
  for (Param& p : unit.params) {
    if (p.param._version() != p.version) p.shard.copy_(p.param.detach().narrow(0, p.first_row, p.own_rows));
  }
  free_storage(unit.gathered);
  unit.is_gathered = false;
}

void FullyShardedModel::start_reduce(Unit& unit) {
  finish_reduce();
  unit.needs_reduce = false;
  at::NoGradGuard no_grad;
  // Each rank's rows of every gradient go to that rank, read in place; the whole gradients are dropped (the transfers
  // hold them until they finish).
  std::vector<std::vector<at::Tensor>> parts(static_cast<size_t>(shard_.size()));
  std::vector<at::Tensor> out;
  unit.reduced = at::empty({unit.chunk_numel}, unit.gathered.options());
  for (Param& p : unit.params) {
    if (!p.param.requires_grad()) continue;  // frozen, on every rank alike: nothing to reduce
    const at::Tensor grad =
        p.param.grad().defined() ? p.param.grad().reshape({-1}) : at::zeros({p.param.numel()}, unit.gathered.options());
    for (int r = 0; r < shard_.size(); ++r) {
      const int64_t first = std::min(p.rows, r * p.chunk_rows);
      parts[static_cast<size_t>(r)].push_back(grad.narrow(0, first * p.row_numel, p.rows_of(r) * p.row_numel));
    }
    out.push_back(unit.reduced.narrow(0, p.chunk_offset, p.own_rows * p.row_numel));
    p.param.mutable_grad() = at::Tensor();
  }
  unit.reducing = shard_.reduce_scatter_pieces_async(parts, out);
  reducing_ = &unit;
}

void FullyShardedModel::finish_reduce() {
  if (reducing_ == nullptr) return;
  Unit& unit = *reducing_;
  reducing_ = nullptr;
  unit.reducing.wait();
  at::NoGradGuard no_grad;
  const at::Tensor mine = unit.reduced.div_(static_cast<double>(shard_.size()));
  unit.reduced = at::Tensor();
  for (Param& p : unit.params) {
    if (!p.param.requires_grad()) continue;
    const at::Tensor slice = mine.narrow(0, p.chunk_offset, p.own_rows * p.row_numel).view_as(p.shard);
    if (p.shard.grad().defined()) {
      p.shard.mutable_grad().add_(slice);
    } else {
      p.shard.mutable_grad() = slice;  // a view: the unit's reduced buffer lives as long as its gradients
    }
  }
}

void FullyShardedModel::before_block_backward(size_t block) {
  in_backward_ = true;
  gather(block);
  if (block > 0) start_gather(block - 1);  // the block whose backward comes next overlaps this one's
}

void FullyShardedModel::after_block_backward(size_t block) {
  start_reduce(units_[block]);
  release(units_[block]);
}

at::Tensor FullyShardedModel::forward(const at::Tensor& tokens) {
  in_backward_ = false;
  // A prefetch no block used since (a backward that stopped early, a forward that skipped a block) holds rows that
  // may be stale by now: dropped, to be gathered afresh.
  for (Unit& unit : units_) {
    if (unit.in_flight) release(unit);
  }
  // A block's gradients are reduced into the shards and dropped by its backward: one still held whole here was given
  // by something else, and would hold the whole model's gradients in memory and be added to by the next backward.
  for (size_t i = 0; i + 1 < units_.size(); ++i) {
    for (const Param& p : units_[i].params) {
      if (p.param.grad().defined()) {
        throw sdk::Error(
            fmt::format("FSDP: parameter '{}' holds a whole gradient at the start of a forward; under FSDP "
                        "gradients belong to the shards (Trainer::parameters()), not the model",
                        p.name));
      }
    }
  }
  Unit& root = units_.back();
  gather(units_.size() - 1);
  if (!runner_checked_) {  // a model that bypasses run_block() would read freed parameters
    for (size_t i = 0; i < units_.size(); ++i) gather(i);
  }
  at::Tensor out = model_.forward(tokens);
  if (!runner_checked_ && ++forwards_ == forwards_to_check_) {
    if (blocks_run_.size() != units_.size() - 1) {
      throw sdk::Error(
          fmt::format("FSDP ([distributed] dp_shard > 1): the model ran {} of its {} blocks through "
                      "run_block(); a model plugin must run every block of blocks() through it (see "
                      "kforge/sdk/model.h), or train with dp_shard = 1",
                      blocks_run_.size(), units_.size() - 1));
    }
    runner_checked_ = true;
  }
  if (at::GradMode::is_enabled() && out.requires_grad()) {
    root.needs_reduce = true;  // the embedding and head are needed again in the backward
  } else {
    release(root);
  }
  return out;
}

void FullyShardedModel::finish_backward() {
  for (const sdk::NamedParameter& p : whole_) {
    if (p.tensor.grad().defined()) {
      throw sdk::Error(
          fmt::format("FSDP: parameter '{}' is held whole because the run never trains it, yet it got a "
                      "gradient",
                      p.name));
    }
  }
  // The same units on every rank, in the same order: whether a unit needs reducing depends only
  // on the graph, never on which gradients this rank's batch reached.
  for (Unit& unit : units_) {
    if (unit.needs_reduce) start_reduce(unit);
    release(unit);
  }
  finish_reduce();
  for (Unit& unit : units_) {
    for (Param& p : unit.params) p.shard.requires_grad_(p.param.requires_grad());
  }
  average_gradients(replicate_, shards_);
}

double FullyShardedModel::clip_gradients(double max_norm) {
  at::NoGradGuard no_grad;
  const at::Device device = shards_.empty() ? at::Device(at::kCPU) : shards_.front().tensor.device();
  at::Tensor squares = at::zeros({}, at::TensorOptions().dtype(at::kDouble).device(device));
  for (const auto& s : shards_) {
    if (s.tensor.grad().defined()) squares += squared_norm(s.tensor.grad());
  }
  shard_.all_reduce(squares);
  return scale_to_norm(shards_, std::sqrt(squares.item<double>()), max_norm);
}

void FullyShardedModel::zero_grad() {
  for (const auto& s : shards_) s.tensor.mutable_grad() = at::Tensor();
}

std::optional<size_t> FullyShardedModel::shard_of_state(const std::string& key) const {
  const std::optional<std::string> param =
      checkpoint::state_owner(key, [&](const std::string& name) { return shard_index_.count(name) != 0; });
  if (!param) return std::nullopt;
  return shard_index_.at(*param);
}

std::map<std::string, checkpoint::Placement> FullyShardedModel::placements(const checkpoint::TensorMap& model,
                                                                         const checkpoint::TensorMap& optimizer) const {
  std::map<std::string, checkpoint::Placement> out;
  auto place = [](const Param& p) {
    std::vector<int64_t> offsets(p.shape.size(), 0);
    offsets[0] = p.first_row;
    return checkpoint::Placement{p.shape, offsets};
  };
  for (const Unit& unit : units_) {
    for (const Param& p : unit.params) {
      if (model.count(p.name)) out.emplace("model/" + p.name, place(p));
    }
  }
  for (const auto& [key, t] : optimizer) {
    const std::optional<size_t> i = shard_of_state(key);
    if (i && t.sizes().equals(by_shard_[*i]->shard.sizes())) out.emplace("optimizer/" + key, place(*by_shard_[*i]));
  }
  return out;
}

void FullyShardedModel::load_model_weights(const checkpoint::Snapshot& snapshot) {
  for (size_t i = 0; i < units_.size(); ++i) gather(i);
  checkpoint::load_model_weights(model_, snapshot);  // into the gathered parameters and the buffers
  at::NoGradGuard no_grad;
  for (Unit& unit : units_) {
    for (Param& p : unit.params) p.shard.copy_(p.param.detach().narrow(0, p.first_row, p.own_rows));
    release(unit);
  }
}

checkpoint::TensorMap FullyShardedModel::shard_optimizer_state(const checkpoint::TensorMap& whole) const {
  checkpoint::TensorMap out;
  for (const auto& [key, t] : whole) {
    const std::optional<size_t> i = shard_of_state(key);
    const bool rows = i && t.sizes().equals(by_shard_[*i]->shape);
    out.emplace(key, rows ? own_rows(*i, t).clone() : t);
  }
  return out;
}

std::vector<at::Tensor> FullyShardedModel::gather_rows(const std::vector<size_t>& params,
                                                       const std::vector<at::Tensor>& rows) const {
  at::NoGradGuard no_grad;
  std::map<at::ScalarType, std::vector<size_t>> by_dtype;  // the same order on every rank
  for (size_t k = 0; k < rows.size(); ++k) {
    const Param& p = *by_shard_[params[k]];
    if (!rows[k].sizes().equals(p.shard.sizes())) {
      throw sdk::Error(fmt::format("FSDP: gathering rows of '{}': got shape {}, this rank's rows are {}", p.name,
                                   c10::str(rows[k].sizes()), c10::str(p.shard.sizes())));
    }
    by_dtype[rows[k].scalar_type()].push_back(k);
  }
  const int64_t size = shard_.size();
  std::vector<at::Tensor> whole(rows.size());
  for (const auto& [dtype, ks] : by_dtype) {
    std::vector<int64_t> offsets;  // of each tensor's chunk in one rank's chunk; padding rows stay zero
    int64_t chunk_numel = 0;
    for (const size_t k : ks) {
      offsets.push_back(chunk_numel);
      chunk_numel += by_shard_[params[k]]->chunk_rows * by_shard_[params[k]]->row_numel;
    }
    at::Tensor chunk = at::zeros({chunk_numel}, rows[ks.front()].options());
    for (size_t j = 0; j < ks.size(); ++j) {
      chunk.narrow(0, offsets[j], rows[ks[j]].numel()).copy_(rows[ks[j]].reshape({-1}));
    }
    at::Tensor all = at::empty({size, chunk_numel}, chunk.options());
    shard_.all_gather_into(all, chunk);
    for (size_t j = 0; j < ks.size(); ++j) {
      const Param& p = *by_shard_[params[ks[j]]];
      const at::Tensor ranks = all.narrow(1, offsets[j], p.chunk_rows * p.row_numel).contiguous();
      whole[ks[j]] = ranks.view({-1}).narrow(0, 0, p.rows * p.row_numel).view(p.shape);
    }
  }
  return whole;
}

at::Tensor FullyShardedModel::own_rows(size_t param, const at::Tensor& whole) const {
  const Param& p = *by_shard_[param];
  return whole.narrow(0, p.first_row, p.own_rows);
}

}  // namespace kforge::parallel
