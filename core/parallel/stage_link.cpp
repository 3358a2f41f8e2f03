// StageLink: activations and their gradients between pipeline stages.
#include "parallel/stage_link.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::parallel {
namespace {

constexpr int kShape = 0, kOutput = 1, kGradient = 2;
constexpr int64_t kMaxDims = 8;

}  // namespace

StageLink::StageLink(const dist::Group& pp, int stages) : group_(pp), stages_(stages) {}

void StageLink::send_output(int stage, int micro, const at::Tensor& output, at::IntArrayRef tokens) {
  const auto key = std::make_tuple(stage, tokens.vec());
  const int to = rank_of(stage + 1);
  if (output.dim() > kMaxDims) {
    throw sdk::Error(
        fmt::format("pipeline parallelism: virtual stage {}'s output has {} dimensions; at most {} cross "
                    "stages",
                    stage, output.dim(), kMaxDims));
  }
  if (announced_.insert(key).second) {  // [dims, dtype, sizes...]
    at::Tensor header = at::zeros({kMaxDims + 2}, at::kLong);
    header[0] = output.dim();
    header[1] = static_cast<int64_t>(output.scalar_type());
    for (int64_t d = 0; d < output.dim(); ++d) header[d + 2] = output.size(d);
    sends_.push_back(group_.send(header, to, tag(stage, 0, kShape)));  // once per shape: any micro-batch's
  }
  sends_.push_back(group_.send(output.detach().contiguous(), to, tag(stage, micro, kOutput)));
}

at::Tensor StageLink::receive_input(int stage, int micro, at::IntArrayRef tokens) {
  const auto key = std::make_tuple(stage - 1, tokens.vec());
  const int from = rank_of(stage - 1);
  auto it = agreed_.find(key);
  if (it == agreed_.end()) {
    at::Tensor header = at::zeros({kMaxDims + 2}, at::kLong);
    receive(header, from, tag(stage - 1, 0, kShape), fmt::format("virtual stage {}'s output shape", stage - 1));
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < header[0].item<int64_t>(); ++d) shape.push_back(header[d + 2].item<int64_t>());
    it = agreed_.emplace(key, std::make_pair(shape, static_cast<at::ScalarType>(header[1].item<int64_t>()))).first;
  }
  at::Tensor input = at::empty(it->second.first, at::TensorOptions().dtype(it->second.second).device(group_.device()));
  receive(input, from, tag(stage - 1, micro, kOutput),
          fmt::format("virtual stage {}'s output of micro-batch {}", stage - 1, micro));
  return input.requires_grad_(true);
}

void StageLink::send_input_gradient(int stage, int micro, const at::Tensor& gradient) {
  sends_.push_back(group_.send(gradient.contiguous(), rank_of(stage - 1), tag(stage - 1, micro, kGradient)));
}

at::Tensor StageLink::receive_output_gradient(int stage, int micro, const at::Tensor& output) {
  at::Tensor gradient = at::empty_like(output, at::MemoryFormat::Contiguous);
  receive(gradient, rank_of(stage + 1), tag(stage, micro, kGradient),
          fmt::format("virtual stage {}'s input gradient of micro-batch {}", stage + 1, micro));
  return gradient;
}

void StageLink::receive(at::Tensor& into, int from, int tag, const std::string& what) {
  const auto start = std::chrono::steady_clock::now();
  try {
    group_.recv(into, from, tag);
  } catch (const sdk::Error& e) {
    throw sdk::Error(fmt::format("pipeline stage {} of {} waited for {} from pipeline stage {}: {}", group_.rank(),
                                 group_.size(), what, from, e.what()));
  }
  waited_ += std::chrono::steady_clock::now() - start;
}

void StageLink::finish() {
  for (dist::PendingCollective& send : sends_) send.wait();
  sends_.clear();
}

double StageLink::take_wait_seconds() {
  const double seconds = std::chrono::duration<double>(waited_).count();
  waited_ = {};
  return seconds;
}

}  // namespace kforge::parallel
