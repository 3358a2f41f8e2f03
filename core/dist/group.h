// Group: one c10d process group (Gloo for a CPU run, NCCL for a CUDA one) and the collectives kforge uses on it;
// every failure names the collective, the group and the rank.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <torch/version.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "dist/endpoints.h"

namespace kforge::dist {

enum class Reduce { Sum, Max, Min };

/// The c10d object that runs the collectives: LibTorch 2.x split backends (Gloo, NCCL) from the ProcessGroup.
#if TORCH_VERSION_MAJOR >= 2
using Backend = c10d::Backend;
#else
using Backend = c10d::ProcessGroup;
#endif

class Group;

/// The seconds the calling thread has spent inside collectives (any group, blocking calls and waits on started ones)
/// since its last call; restarts the count. The training loop reads it per step: the time the step was held up by
/// communication, including waiting for a slower rank.
double take_collective_seconds();

/// A collective started without waiting; wait() finishes it, with the blocking call's errors.
class PendingCollective {
 public:
  PendingCollective() = default;  ///< nothing in flight
  void wait();

 private:
  friend class Group;
  const Group* group_ = nullptr;
  const char* collective_ = "";
  std::vector<c10::intrusive_ptr<c10d::Work>> works_;  ///< the transfers, waited for in order
  std::function<void()> then_;                         ///< after they finish: the copy back, or the sum of what came in
  std::vector<at::Tensor> keep_;  ///< what the transfers read or write, kept alive until they finish
};

class Group {
 public:
  /// A group of one (every collective is the identity).
  Group() = default;
  /// Joins the group `name` (its members rendezvous under that prefix of `store`); `rank` and
  /// `size` are within the group, `global_rank` is for messages. On a CUDA `device` the group is NCCL's (with
  /// asynchronous error handling, so a dead peer ends a collective within `timeout`); on the CPU it is Gloo's, one
  /// device per interface of `endpoints.bound`. A failure names the peers (of `endpoints.peers`) it could not reach,
  /// and `timeout_key`, the config key that set `timeout`.
  Group(const c10::intrusive_ptr<c10d::Store>& store, std::string name, int rank, int size, int global_rank,
        std::chrono::milliseconds timeout, const Endpoints& endpoints,
        c10::Device device = c10::Device(c10::DeviceType::CPU),
        std::string timeout_key = "distributed.nccl_timeout_sec");

  const std::string& name() const { return name_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// Where the collectives run. Tensors given on another device (e.g. a CPU flag in a CUDA run) are copied there and
  /// their results copied back, so callers need not know the backend.
  const c10::Device& device() const { return device_; }

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
  /// all_gather_into started without waiting: `out` holds the result once the returned collective is waited for, and
  /// must stay untouched until then. Every member starts its collectives in the same order.
  PendingCollective all_gather_into_async(at::Tensor& out, const at::Tensor& tensor) const;
  /// Sum over members of `tensor` (first dim divisible by size()), returning this rank's
  /// 1/size() slice of dim 0. NCCL reduce-scatters natively; Gloo 1.13 has no reduce_scatter: each member sends every
  /// other its slice (one all-to-all, the traffic of a reduce-scatter, half an all-reduce's) and sums the slices it
  /// receives in member order.
  at::Tensor reduce_scatter(const at::Tensor& tensor) const;
  /// reduce_scatter started without waiting: `out` (contiguous, shaped like one slice) holds this rank's sum once the
  /// returned collective is waited for; `tensor` and `out` must stay untouched until then.
  PendingCollective reduce_scatter_async(at::Tensor& out, const at::Tensor& tensor) const;
  /// An all-gather of several tensors at once, each straight to where it belongs: into[m] receives, in order, the
  /// tensors member m passes as `mine` (the callers agree on every size and dtype; into[rank()] is copied from `mine`).
  /// Every tensor contiguous, on device(). Gloo: each member sends its tensors to every other point to point, with no
  /// staging buffer; NCCL: packed into one all-gather. None of them may be touched until the returned collective is
  /// waited for. Every member starts its collectives in the same order.
  PendingCollective all_gather_pieces_async(const std::vector<at::Tensor>& mine,
                                            const std::vector<std::vector<at::Tensor>>& into) const;
  /// A reduce-scatter of several tensors at once: parts[m] go to member m, and out[k] becomes the sum, in member order,
  /// of what every member passes as parts[rank()][k] (sizes and dtypes agreed). Contiguous tensors on device(). Gloo:
  /// point to point, the sum taken by wait(); NCCL: packed into one reduce-scatter. None of them may be touched until
  /// the returned collective is waited for.
  PendingCollective reduce_scatter_pieces_async(const std::vector<std::vector<at::Tensor>>& parts,
                                                const std::vector<at::Tensor>& out) const;
  /// Rows of `input` go, send[j] of them in order, to member j; returns the rows received, recv[j] from member j in
  /// member order. recv[j] must be member j's send[this rank] (the caller exchanges the counts first).
  at::Tensor all_to_all(const at::Tensor& input, const std::vector<int64_t>& send,
                        const std::vector<int64_t>& recv) const;
  /// Sends `tensor` to member `to` under `tag` (below 2^30: the pieces collectives use the tags above; point to point)
  /// and returns at once: `tensor` must stay untouched until the returned transfer is waited for.
  PendingCollective send(const at::Tensor& tensor, int to, int tag) const;
  /// Receives member `from`'s send under `tag` into `tensor` (contiguous, the sender's shape and dtype); waits at most
  /// the group's timeout, and fails at once when the sender's process is gone.
  void recv(at::Tensor& tensor, int from, int tag) const;
  void barrier() const;
  /// Every member's `value`, in group-rank order (two all_gathers: lengths, then padded bytes).
  /// Unlike a gather through the store, it fails at once when a member's process dies.
  std::vector<std::string> all_gather_strings(const std::string& value) const;

 private:
  friend class PendingCollective;
  template <class Fn>
  void run(const char* collective, Fn&& fn) const;
  /// `tensor` on device(): itself when it is there already, else a copy.
  at::Tensor staged(const at::Tensor& tensor) const;
  /// Checks that `pieces[m]` (one list per member) are contiguous tensors on device(), as many for every member.
  void check_pieces(const char* collective, const std::vector<std::vector<at::Tensor>>& pieces) const;
  /// Point to point on Gloo: sends[m][k] to member m, recvs[m][k] from member m, for every other member; each pair
  /// under its own tag from this group's sequence (every member calls in the same order). Entries with no elements
  /// are skipped on both sides. Appends the transfers to `pending`.
  void exchange(PendingCollective& pending, const std::vector<std::vector<at::Tensor>>& sends,
                const std::vector<std::vector<at::Tensor>>& recvs) const;

  std::string name_ = "self";
  int rank_ = 0, size_ = 1, global_rank_ = 0;
  std::chrono::milliseconds timeout_{0};
  std::string timeout_key_;
  c10::Device device_ = c10::Device(c10::DeviceType::CPU);
  c10::intrusive_ptr<Backend> pg_;
  std::shared_ptr<const std::vector<Peer>> peers_;  ///< every rank's endpoint, to name a lost peer
  mutable uint32_t next_tag_ = 0;  ///< exchange()'s tags, above the ones send() and recv() callers use
};

}  // namespace kforge::dist
