// ContextGroup::pass_on: every tensor sent to the next rank without waiting, then the previous rank's received.
#include "dist/context_group.h"

#include <ATen/ATen.h>

namespace kforge::dist {

std::vector<at::Tensor> ContextGroup::pass_on(const std::vector<at::Tensor>& tensors) const {
  const int next = (rank() + 1) % size(), previous = (rank() - 1 + size()) % size();
  constexpr int kTags = 1 << 29;  // below Group::send's limit
  std::vector<PendingCollective> sends;
  std::vector<at::Tensor> sent, received;
  const int first = next_tag_;
  next_tag_ = (next_tag_ + static_cast<int>(tensors.size())) % kTags;
  for (size_t i = 0; i < tensors.size(); ++i) {
    sent.push_back(tensors[i].contiguous());
    sends.push_back(group_.send(sent.back(), next, (first + static_cast<int>(i)) % kTags));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    received.push_back(at::empty_like(sent[i]));
    group_.recv(received.back(), previous, (first + static_cast<int>(i)) % kTags);
  }
  for (PendingCollective& s : sends) s.wait();
  return received;
}

}  // namespace kforge::dist
