// ContextGroup: the host's sdk::ContextParallel, over the mesh's cp group: pass_on sends to the next rank of the ring
// and receives from the previous one, point to point.
#pragma once

#include "dist/group.h"
#include "kforge/sdk/context_parallel.h"

namespace kforge::dist {

class ContextGroup final : public sdk::ContextParallel {
 public:
  /// `group` is held by reference and must outlive this object.
  explicit ContextGroup(const Group& group) : group_(group) {}
  ContextGroup(Group&&) = delete;

  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }
  std::vector<at::Tensor> pass_on(const std::vector<at::Tensor>& tensors) const override;

 private:
  const Group& group_;
  mutable int next_tag_ = 0;  ///< every member passes in the same order, so the tags agree pairwise
};

}  // namespace kforge::dist
