// TensorGroup: the host's sdk::TensorParallel, over the mesh's tp group; enter, sum, gather and scatter are autograd
// functions, so a model's backward sums its gradients through the same collectives.
#pragma once

#include "dist/group.h"
#include "kforge/sdk/tensor_parallel.h"

namespace kforge::dist {

class TensorGroup final : public sdk::TensorParallel {
 public:
  /// `group` is held by reference and must outlive this object.
  explicit TensorGroup(const Group& group) : group_(group) {}
  TensorGroup(Group&&) = delete;

  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  at::Tensor enter(const at::Tensor& x) const override;
  at::Tensor sum(const at::Tensor& x) const override;
  at::Tensor max(const at::Tensor& x) const override;
  at::Tensor gather(const at::Tensor& x, int64_t dim) const override;
  at::Tensor scatter(const at::Tensor& x, int64_t dim) const override;

  /// Seconds spent in this group's collectives (forward and backward) since the last call.
  double take_seconds() const;

 private:
  const Group& group_;
  mutable double seconds_ = 0;
};

/// `x` reduced by `op` over `group`, in a new tensor (bfloat16, which Gloo cannot reduce, in float32, rounded once).
at::Tensor reduced_over(const Group& group, const at::Tensor& x, Reduce op = Reduce::Sum);
/// Every rank's `x` concatenated along `dim` over `group`, in rank order.
at::Tensor gathered_over(const Group& group, const at::Tensor& x, int64_t dim);
/// This rank's equal part along `dim` of the sum of every rank's `x` over `group` (bfloat16 summed in float32).
at::Tensor scattered_over(const Group& group, const at::Tensor& x, int64_t dim);

}  // namespace kforge::dist
