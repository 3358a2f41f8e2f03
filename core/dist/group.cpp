// The c10d collectives behind Group (see group.h).
#include "dist/group.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#ifdef KFORGE_WITH_CUDA
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

thread_local double collective_seconds = 0;  ///< see take_collective_seconds

c10d::ReduceOp to_c10d(Reduce op) {
  switch (op) {
    case Reduce::Max: return c10d::ReduceOp::MAX;
    case Reduce::Min: return c10d::ReduceOp::MIN;
    case Reduce::Sum: break;
  }
  return c10d::ReduceOp::SUM;
}

// Gloo (LibTorch 1.13) has no bfloat16 (nor int16): a collective that only moves data (all-gather, all-to-all) moves
// its bits as float16, which it copies without reading.
at::Tensor as_movable(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 && !t.is_cuda() ? t.view(at::kHalf) : t;
}

c10::intrusive_ptr<Backend> make_process_group(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                               std::chrono::milliseconds timeout,
                                               const std::vector<NetInterface>& bound, const c10::Device& device) {
  if (device.is_cuda()) {
#ifdef KFORGE_WITH_CUDA
    // A collective whose peer died fails after the timeout instead of hanging (LibTorch 1.13 reads the first name,
    // 2.2 and later the second); a user's own setting wins.
    setenv("NCCL_ASYNC_ERROR_HANDLING", "1", /*overwrite=*/0);
    setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", /*overwrite=*/0);
    auto options = c10d::ProcessGroupNCCL::Options::create();
    options->timeout = timeout;
    return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, options);
#else
    throw sdk::Error("a CUDA process group needs a kforge built with KFORGE_WITH_CUDA (this is a CPU build)");
#endif
  }
  auto options = c10d::ProcessGroupGloo::Options::create(timeout);
  for (const NetInterface& i : bound) {
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(i.address));
  }
  options->threads = 2;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

// Where a member's tensor k starts in a packed chunk when pieces[m] are member m's tensors: at the same offset for every
// member, with room for the largest; the last entry is the chunk's length.
std::vector<int64_t> packed_offsets(const std::vector<std::vector<at::Tensor>>& pieces) {
  std::vector<int64_t> offsets{0};
  for (size_t k = 0; k < pieces.front().size(); ++k) {
    int64_t room = 0;
    for (const auto& of_member : pieces) room = std::max(room, of_member[k].numel());
    offsets.push_back(offsets.back() + room);
  }
  return offsets;
}

}  // namespace

Group::Group(const c10::intrusive_ptr<c10d::Store>& store, std::string name, int rank, int size, int global_rank,
             std::chrono::milliseconds timeout, const Endpoints& endpoints, c10::Device device,
             std::string timeout_key)
    : name_(std::move(name)),
      rank_(rank),
      size_(size),
      global_rank_(global_rank),
      timeout_(timeout),
      timeout_key_(std::move(timeout_key)),
      device_(device),
      peers_(endpoints.peers) {
  if (size_ == 1) return;
  run("process group creation", [&] {
    pg_ = make_process_group(c10::make_intrusive<c10d::PrefixStore>("kforge/" + name_, store), rank_, size_, timeout_,
                             endpoints.bound, device_);
  });
}

at::Tensor Group::staged(const at::Tensor& tensor) const {
  return tensor.device() == device_ ? tensor : tensor.to(device_);
}

double take_collective_seconds() {
  const double s = collective_seconds;
  collective_seconds = 0;
  return s;
}

template <class Fn>
void Group::run(const char* collective, Fn&& fn) const {
  const auto start = std::chrono::steady_clock::now();
  try {
    fn();
    collective_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  } catch (const std::exception& e) {
    const std::string peer = peers_ ? peers_named_in(e.what(), *peers_, global_rank_) : "";
    const std::string cause =
        peer.empty() ? "The error names no peer: a rank died, hung, diverged or lost its link; look at the other "
                       "ranks' logs"
                     : fmt::format("The peer it lost: {}, which died, hung or lost its link", peer);
    throw sdk::Error(fmt::format("{} on process group '{}' failed on rank {} (rank {} of {} in the group): {}. {} (the "
                                 "timeout is {} = {} s)",
                                 collective, name_, global_rank_, rank_, size_, e.what(), cause, timeout_key_,
                                 timeout_.count() / 1000.0));
  }
}

void Group::all_reduce(at::Tensor& tensor, Reduce op) const {
  if (size_ == 1) return;
  run("all_reduce", [&] {
    std::vector<at::Tensor> tensors{staged(tensor)};
    c10d::AllreduceOptions options;
    options.reduceOp = to_c10d(op);
    pg_->allreduce(tensors, options)->wait();
    if (!tensors[0].is_same(tensor)) tensor.copy_(tensors[0]);
  });
}

PendingCollective Group::all_reduce_async(at::Tensor& tensor) const {
  PendingCollective pending;
  if (size_ == 1) return pending;
  pending.group_ = this;
  pending.collective_ = "all_reduce";
  run("all_reduce", [&] {
    std::vector<at::Tensor> tensors{staged(tensor)};
    pending.works_.push_back(pg_->allreduce(tensors));
    if (!tensors[0].is_same(tensor))
      pending.then_ = [target = tensor, staged = tensors[0]]() mutable { target.copy_(staged); };
  });
  return pending;
}

void PendingCollective::wait() {
  if (group_ == nullptr) return;
  group_->run(collective_, [&] {
    for (const auto& work : works_) work->wait();
    if (then_) then_();
  });
  *this = PendingCollective();
}

void Group::broadcast(at::Tensor& tensor, int root) const {
  if (size_ == 1) return;
  run("broadcast", [&] {
    std::vector<at::Tensor> tensors{staged(tensor)};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    pg_->broadcast(tensors, options)->wait();
    if (!tensors[0].is_same(tensor)) tensor.copy_(tensors[0]);
  });
}

std::vector<at::Tensor> Group::all_gather(const at::Tensor& tensor) const {
  std::vector<int64_t> shape{size_};
  for (const int64_t d : tensor.sizes()) shape.push_back(d);
  at::Tensor out = at::empty(shape, tensor.options());
  all_gather_into(out, tensor);
  return out.unbind(0);
}

void Group::all_gather_into(at::Tensor& out, const at::Tensor& tensor) const {
  all_gather_into_async(out, tensor).wait();
}

PendingCollective Group::all_gather_into_async(at::Tensor& out, const at::Tensor& tensor) const {
  if (out.dim() == 0 || out.size(0) != size_ || !out.is_contiguous() || out[0].sizes() != tensor.sizes()) {
    throw sdk::Error(fmt::format("all_gather on process group '{}' (rank {}): output of shape {} does not hold {} "
                                 "contiguous tensors of shape {}",
                                 name_, global_rank_, c10::str(out.sizes()), size_, c10::str(tensor.sizes())));
  }
  PendingCollective pending;
  if (size_ == 1) {
    out[0].copy_(tensor);
    return pending;
  }
  pending.group_ = this;
  pending.collective_ = "all_gather";
  if (!device_.is_cuda()) {
    if (tensor.numel() == 0) return pending;
    // Gloo's all-gather slows down sharply past a few MB (33 MB per rank: 0.38 s on loopback, where an all-to-all of
    // twice the bytes takes 16 ms), so each member sends its tensor to every member with one all-to-all.
    pending.keep_ = {tensor.reshape({1, -1}).expand({size_, tensor.numel()}).contiguous(), out};
    run("all_gather", [&] {
      std::vector<int64_t> equal_splits;
      at::Tensor into = as_movable(out.view({-1})), from = as_movable(pending.keep_[0]);
      pending.works_.push_back(pg_->alltoall_base(into, from, equal_splits, equal_splits));
    });
    return pending;
  }
  at::Tensor gathered = staged(out);
  pending.keep_ = {staged(tensor).contiguous(), gathered};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < size_; ++r) outputs[0].push_back(as_movable(gathered[r]));
  run("all_gather", [&] {
    std::vector<at::Tensor> inputs{as_movable(pending.keep_[0])};
    pending.works_.push_back(pg_->allgather(outputs, inputs));
  });
  if (!gathered.is_same(out)) pending.then_ = [target = out, gathered]() mutable { target.copy_(gathered); };
  return pending;
}

at::Tensor Group::reduce_scatter(const at::Tensor& tensor) const {
  std::vector<int64_t> shape = tensor.sizes().vec();
  if (!shape.empty()) shape[0] /= size_;
  at::Tensor out = at::empty(shape, tensor.options());
  reduce_scatter_async(out, tensor).wait();
  return out;
}

PendingCollective Group::reduce_scatter_async(at::Tensor& out, const at::Tensor& tensor) const {
  if (tensor.dim() == 0 || tensor.size(0) % size_ != 0 || !out.is_contiguous() ||
      out.sizes() != tensor.chunk(size_, 0)[0].sizes()) {
    throw sdk::Error(
        fmt::format("reduce_scatter on process group '{}' (rank {}): the first dimension of shape {} is "
                    "not divisible by the group size {}, or the output (shape {}) is not one contiguous "
                    "slice of it",
                    name_, global_rank_, c10::str(tensor.sizes()), size_, c10::str(out.sizes())));
  }
  PendingCollective pending;
  if (size_ == 1) {
    out.copy_(tensor);
    return pending;
  }
  pending.group_ = this;
  pending.collective_ = "reduce_scatter";
  at::Tensor input = staged(tensor).contiguous();
  if (device_.is_cuda()) {
    at::Tensor into = out.device() == device_ ? out : at::empty(out.sizes(), out.options().device(device_));
    pending.keep_ = {input, into};
    run("reduce_scatter", [&] { pending.works_.push_back(pg_->_reduce_scatter_base(into, input)); });
    if (!into.is_same(out)) pending.then_ = [target = out, into]() mutable { target.copy_(into); };
    return pending;
  }
  // Row block j of the input goes to member j; row block j of `received` is member j's block for this rank.
  at::Tensor received = at::empty_like(input);
  pending.keep_ = {input, received};
  run("reduce_scatter", [&] {
    std::vector<int64_t> equal_splits;
    at::Tensor into = as_movable(received), from = as_movable(input);
    pending.works_.push_back(pg_->alltoall_base(into, from, equal_splits, equal_splits));
  });
  std::vector<int64_t> by_member = out.sizes().vec();
  by_member.insert(by_member.begin(), size_);
  pending.then_ = [target = out, by_member = received.view(by_member)]() mutable { at::sum_out(target, by_member, 0); };
  return pending;
}

void Group::check_pieces(const char* collective, const std::vector<std::vector<at::Tensor>>& pieces) const {
  bool ok = static_cast<int>(pieces.size()) == size_;
  for (const auto& of_member : pieces) {
    ok = ok && of_member.size() == pieces.front().size();
    for (const at::Tensor& t : of_member) ok = ok && t.is_contiguous() && t.device() == device_;
  }
  if (!ok) {
    throw sdk::Error(
        fmt::format("{} on process group '{}' (rank {}): needs, for each of its {} members, as many "
                    "contiguous tensors on {} (got {} lists)",
                    collective, name_, global_rank_, size_, device_.str(), pieces.size()));
  }
}

void Group::exchange(PendingCollective& pending, const std::vector<std::vector<at::Tensor>>& sends,
                     const std::vector<std::vector<at::Tensor>>& recvs) const {
  const size_t count = sends.front().size();
  const uint32_t first = next_tag_;
  next_tag_ += static_cast<uint32_t>(count);
  for (size_t k = 0; k < count; ++k) {
    const int tag = static_cast<int>((1u << 30) | ((first + k) & ((1u << 30) - 1)));  // above send()'s tags
    for (int m = 0; m < size_; ++m) {
      if (m == rank_) continue;
      if (sends[m][k].numel() > 0) {
        std::vector<at::Tensor> one{as_movable(sends[m][k])};
        pending.works_.push_back(pg_->send(one, m, tag));
      }
      if (recvs[m][k].numel() > 0) {
        std::vector<at::Tensor> one{as_movable(recvs[m][k])};
        pending.works_.push_back(pg_->recv(one, m, tag));
      }
    }
  }
}

PendingCollective Group::all_gather_pieces_async(const std::vector<at::Tensor>& mine,
                                                 const std::vector<std::vector<at::Tensor>>& into) const {
  check_pieces("all_gather", into);
  check_pieces("all_gather", std::vector<std::vector<at::Tensor>>(size_, mine));
  PendingCollective pending;
  for (size_t k = 0; k < mine.size(); ++k) into[rank_][k].view({-1}).copy_(mine[k].view({-1}));
  if (size_ == 1) return pending;
  pending.group_ = this;
  pending.collective_ = "all_gather";
  if (!device_.is_cuda()) {
    run("all_gather", [&] { exchange(pending, std::vector<std::vector<at::Tensor>>(size_, mine), into); });
    return pending;
  }
  // NCCL: every member's tensors packed in one chunk.
  const std::vector<int64_t> offsets = packed_offsets(into);
  at::Tensor chunk = at::zeros({offsets.back()}, mine.empty() ? at::TensorOptions(device_) : mine[0].options());
  for (size_t k = 0; k < mine.size(); ++k) chunk.narrow(0, offsets[k], mine[k].numel()).copy_(mine[k].view({-1}));
  at::Tensor all = at::empty({size_, offsets.back()}, chunk.options());
  pending = all_gather_into_async(all, chunk);
  pending.then_ = [this, then = pending.then_, all, offsets, into] {
    if (then) then();
    for (int m = 0; m < size_; ++m) {
      if (m == rank_) continue;
      for (size_t k = 0; k < into[m].size(); ++k) {
        into[m][k].view({-1}).copy_(all[m].narrow(0, offsets[k], into[m][k].numel()));
      }
    }
  };
  return pending;
}

PendingCollective Group::reduce_scatter_pieces_async(const std::vector<std::vector<at::Tensor>>& parts,
                                                     const std::vector<at::Tensor>& out) const {
  check_pieces("reduce_scatter", parts);
  check_pieces("reduce_scatter", std::vector<std::vector<at::Tensor>>(size_, out));
  PendingCollective pending;
  if (size_ == 1) {
    for (size_t k = 0; k < out.size(); ++k) out[k].view({-1}).copy_(parts[0][k].view({-1}));
    return pending;
  }
  pending.group_ = this;
  pending.collective_ = "reduce_scatter";
  if (!device_.is_cuda()) {
    // What every other member sends this rank lands in `received`; wait() adds it up with this rank's own parts.
    std::vector<std::vector<at::Tensor>> received(size_);
    for (int m = 0; m < size_; ++m) {
      for (size_t k = 0; k < out.size(); ++k) received[m].push_back(m == rank_ ? parts[m][k] : at::empty_like(out[k]));
    }
    run("reduce_scatter", [&] { exchange(pending, parts, received); });
    pending.then_ = [received, out] {
      for (size_t k = 0; k < out.size(); ++k) {
        at::Tensor sum = out[k].view({-1});
        at::add_out(sum, received[0][k].view({-1}), received[1][k].view({-1}));
        for (size_t m = 2; m < received.size(); ++m) sum.add_(received[m][k].view({-1}));
      }
    };
    return pending;
  }
  // NCCL: packed rank-major, one block per member (zero padding).
  const std::vector<int64_t> offsets = packed_offsets(parts);
  const at::TensorOptions options = out.empty() ? at::TensorOptions(device_) : out[0].options();
  at::Tensor all = at::zeros({size_, offsets.back()}, options);
  for (int m = 0; m < size_; ++m) {
    for (size_t k = 0; k < out.size(); ++k) {
      all[m].narrow(0, offsets[k], parts[m][k].numel()).copy_(parts[m][k].view({-1}));
    }
  }
  at::Tensor mine = at::empty({offsets.back()}, options);
  pending = reduce_scatter_async(mine, all.view({-1}));
  pending.then_ = [then = pending.then_, mine, offsets, out] {
    if (then) then();
    for (size_t k = 0; k < out.size(); ++k) out[k].view({-1}).copy_(mine.narrow(0, offsets[k], out[k].numel()));
  };
  return pending;
}

at::Tensor Group::all_to_all(const at::Tensor& input, const std::vector<int64_t>& send,
                             const std::vector<int64_t>& recv) const {
  auto total = [](const std::vector<int64_t>& counts) {
    int64_t n = 0;
    for (const int64_t c : counts) n += c;
    return n;
  };
  if (static_cast<int>(send.size()) != size_ || static_cast<int>(recv.size()) != size_ || input.dim() == 0 ||
      total(send) != input.size(0)) {
    throw sdk::Error(fmt::format(
        "all_to_all on process group '{}' (rank {}): {} send and {} receive counts for {} "
        "members, and {} rows where the send counts add up to {}",
        name_, global_rank_, send.size(), recv.size(), size_, input.dim() ? input.size(0) : 0, total(send)));
  }
  std::vector<int64_t> shape = input.sizes().vec();
  shape[0] = total(recv);
  if (size_ == 1) return input.clone();
  at::Tensor in = staged(input).contiguous();
  at::Tensor out = at::empty(shape, in.options());
  run("all_to_all", [&] {
    std::vector<int64_t> out_splits = recv, in_splits = send;
    at::Tensor into = as_movable(out), from = as_movable(in);
    pg_->alltoall_base(into, from, out_splits, in_splits)->wait();
  });
  return input.device() == device_ ? out : out.to(input.device());
}

PendingCollective Group::send(const at::Tensor& tensor, int to, int tag) const {
  PendingCollective pending;
  pending.group_ = this;
  pending.collective_ = "send";
  run("send", [&] {
    std::vector<at::Tensor> tensors{as_movable(staged(tensor).contiguous())};
    pending.keep_ = tensors;
    pending.works_.push_back(pg_->send(tensors, to, tag));
  });
  return pending;
}

void Group::recv(at::Tensor& tensor, int from, int tag) const {
  run("recv", [&] {
    at::Tensor into = staged(tensor);
    std::vector<at::Tensor> tensors{as_movable(into)};
    pg_->recv(tensors, from, tag)->wait();
    if (!into.is_same(tensor)) tensor.copy_(into);
  });
}

void Group::barrier() const {
  if (size_ == 1) return;
  run("barrier", [&] { pg_->barrier()->wait(); });
}

std::vector<std::string> Group::all_gather_strings(const std::string& value) const {
  if (size_ == 1) return {value};
  const at::Tensor length = at::full({1}, static_cast<int64_t>(value.size()), at::kLong);
  const std::vector<at::Tensor> lengths = all_gather(length);
  int64_t longest = 0;
  for (const at::Tensor& l : lengths) longest = std::max(longest, l.item<int64_t>());
  at::Tensor bytes = at::zeros({std::max<int64_t>(longest, 1)}, at::kByte);  // Gloo wants a non-empty buffer
  std::memcpy(bytes.data_ptr(), value.data(), value.size());
  std::vector<std::string> out;
  const std::vector<at::Tensor> all = all_gather(bytes);
  for (int r = 0; r < size_; ++r) {
    const at::Tensor& b = all[static_cast<size_t>(r)];
    const auto size = static_cast<size_t>(lengths[static_cast<size_t>(r)].item<int64_t>());
    out.emplace_back(static_cast<const char*>(b.data_ptr()), size);
  }
  return out;
}

}  // namespace kforge::dist
