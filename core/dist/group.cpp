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
                                               std::chrono::milliseconds timeout, bool loopback,
                                               const c10::Device& device) {
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
  options->devices.push_back(loopback ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                      : c10d::ProcessGroupGloo::createDefaultDevice());
  options->threads = 2;
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, options);
}

}  // namespace

Group::Group(const c10::intrusive_ptr<c10d::Store>& store, std::string name, int rank, int size, int global_rank,
             std::chrono::milliseconds timeout, bool loopback, c10::Device device)
    : name_(std::move(name)), rank_(rank), size_(size), global_rank_(global_rank), timeout_(timeout), device_(device) {
  if (size_ == 1) return;
  run("process group creation", [&] {
    pg_ = make_process_group(c10::make_intrusive<c10d::PrefixStore>("kforge/" + name_, store), rank_, size_, timeout_,
                             loopback, device_);
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
    throw sdk::Error(fmt::format(
        "{} on process group '{}' failed on rank {} (rank {} of {} in the group): {}. Another rank probably died, "
        "hung or diverged (the timeout is distributed.nccl_timeout_sec = {} s); look at the other ranks' logs",
        collective, name_, global_rank_, rank_, size_, e.what(), timeout_.count() / 1000));
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
    pending.work_ = pg_->allreduce(tensors);
    if (!tensors[0].is_same(tensor)) {
      pending.target_ = tensor;
      pending.staged_ = tensors[0];
    }
  });
  return pending;
}

void PendingCollective::wait() {
  if (!work_) return;
  group_->run(collective_, [&] {
    work_->wait();
    if (sum_rows_) {
      at::sum_out(target_, staged_, 0);
    } else if (staged_.defined()) {
      target_.copy_(staged_);
    }
  });
  work_.reset();
  target_ = staged_ = input_ = at::Tensor();
  sum_rows_ = false;
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
    pending.input_ = tensor.reshape({1, -1}).expand({size_, tensor.numel()}).contiguous();
    run("all_gather", [&] {
      std::vector<int64_t> equal_splits;
      at::Tensor into = as_movable(out.view({-1})), from = as_movable(pending.input_);
      pending.work_ = pg_->alltoall_base(into, from, equal_splits, equal_splits);
    });
    return pending;
  }
  pending.input_ = staged(tensor).contiguous();
  at::Tensor gathered = staged(out);
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < size_; ++r) outputs[0].push_back(as_movable(gathered[r]));
  run("all_gather", [&] {
    std::vector<at::Tensor> inputs{as_movable(pending.input_)};
    pending.work_ = pg_->allgather(outputs, inputs);
  });
  if (!gathered.is_same(out)) {
    pending.target_ = out;
    pending.staged_ = gathered;
  }
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
  pending.input_ = staged(tensor).contiguous();
  if (device_.is_cuda()) {
    at::Tensor into = out.device() == device_ ? out : at::empty(out.sizes(), out.options().device(device_));
    run("reduce_scatter", [&] { pending.work_ = pg_->_reduce_scatter_base(into, pending.input_); });
    if (!into.is_same(out)) {
      pending.target_ = out;
      pending.staged_ = into;
    }
    return pending;
  }
  // Row block j of the input goes to member j; row block j of `received` is member j's block for this rank.
  at::Tensor received = at::empty_like(pending.input_);
  run("reduce_scatter", [&] {
    std::vector<int64_t> equal_splits;
    at::Tensor into = as_movable(received), from = as_movable(pending.input_);
    pending.work_ = pg_->alltoall_base(into, from, equal_splits, equal_splits);
  });
  std::vector<int64_t> by_member = out.sizes().vec();
  by_member.insert(by_member.begin(), size_);
  pending.target_ = out;
  pending.staged_ = received.view(by_member);
  pending.sum_rows_ = true;
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
    pending.input_ = as_movable(staged(tensor).contiguous());
    std::vector<at::Tensor> tensors{pending.input_};
    pending.work_ = pg_->send(tensors, to, tag);
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
