// ExpertGroup: the host's sdk::ExpertParallel, over the mesh's ep group; its exchanges are autograd functions, so
// a model's backward sends gradients back through the same collectives.
#pragma once

#include <cstdint>
#include <vector>

#include "dist/group.h"
#include "kforge/sdk/expert_parallel.h"

namespace kforge::dist {

class ExpertGroup final : public sdk::ExpertParallel {
 public:
  /// `group` is held by reference and must outlive this object.
  explicit ExpertGroup(const Group& group) : group_(group) {}
  ExpertGroup(Group&&) = delete;

  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  std::vector<int64_t> exchange_counts(const std::vector<int64_t>& send) const override;
  at::Tensor all_to_all(const at::Tensor& x, const std::vector<int64_t>& send,
                        const std::vector<int64_t>& recv) const override;
  at::Tensor share(const at::Tensor& x) const override;
  at::Tensor unite(const at::Tensor& share, int64_t n) const override;

  /// Seconds spent in this group's exchanges (forward and backward) since the last call.
  double take_seconds() const;

 private:
  const Group& group_;
  mutable double seconds_ = 0;
};

/// Rows [n*r/size, n*(r+1)/size): rank r's share of n rows (as ExpertParallel::share splits them).
std::pair<int64_t, int64_t> share_rows(int64_t n, int rank, int size);

}  // namespace kforge::dist
