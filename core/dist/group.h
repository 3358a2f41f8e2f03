// Group: one c10d process group (Gloo on CPU, NCCL with KFORGE_WITH_CUDA) and the collectives
// kforge uses on it; every failure names the collective, the group and the rank.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace kforge::dist {

enum class Reduce { Sum, Max, Min };

class Group;

/// A collective started without waiting; wait() finishes it, with the blocking call's errors.
class PendingCollective {
 public:
  PendingCollective() = default;  ///< nothing in flight
  void wait();

 private:
  friend class Group;
  const Group* group_ = nullptr;
  const char* collective_ = "";
  c10::intrusive_ptr<c10d::Work> work_;
};

class Group {
 public:
  /// A group of one (every collective is the identity).
  Group() = default;
  /// Joins the group `name` (its members rendezvous under that prefix of `store`); `rank` and
  /// `size` are within the group, `global_rank` is for messages. `loopback` binds Gloo to
  /// 127.0.0.1 (all ranks on one host), otherwise to this host's address.
  Group(const c10::intrusive_ptr<c10d::Store>& store, std::string name, int rank, int size, int global_rank,
        std::chrono::milliseconds timeout, bool loopback);

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// In place, on every member.
  void all_reduce(at::Tensor& tensor, Reduce op = Reduce::Sum) const;
  /// Starts a sum all_reduce of `tensor` in place and returns at once (Gloo runs it on its own
  /// threads); `tensor` must stay untouched until the returned collective is waited for.
  PendingCollective all_reduce_async(at::Tensor& tensor) const;
  void broadcast(at::Tensor& tensor, int root) const;
  /// Every member's `tensor` (same shape everywhere), in group-rank order.
  std::vector<at::Tensor> all_gather(const at::Tensor& tensor) const;
  /// Every member's `tensor` written into out[r] (out: [size(), tensor's shape], contiguous).
  void all_gather_into(at::Tensor& out, const at::Tensor& tensor) const;
  /// Sum over members of `tensor` (first dim divisible by size()), returning this rank's
  /// 1/size() slice of dim 0. Gloo 1.13 has no reduce_scatter: built from all_reduce + slice,
  /// reducing in place when `tensor` is contiguous (pass a buffer you no longer need).
  at::Tensor reduce_scatter(at::Tensor tensor) const;
  void barrier() const;
  /// Every member's `value`, in group-rank order (two all_gathers: lengths, then padded bytes).
  /// Unlike a gather through the store, it fails at once when a member's process dies.
  std::vector<std::string> all_gather_strings(const std::string& value) const;

 private:
  friend class PendingCollective;
  template <class Fn>
  void run(const char* collective, Fn&& fn) const;

  std::string name_ = "self";
  int rank_ = 0, size_ = 1, global_rank_ = 0;
  std::chrono::milliseconds timeout_{0};
  c10::intrusive_ptr<c10d::ProcessGroup> pg_;
};

}  // namespace kforge::dist
