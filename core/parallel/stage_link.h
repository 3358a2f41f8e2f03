// StageLink: what moves between pipeline stages: each virtual stage's output to the next one's rank, and its input
// gradient back, point to point over the pp group; sends never wait, receives do (timed, for the bubble).
#pragma once

#include <ATen/core/Tensor.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dist/group.h"

namespace kforge::parallel {

class StageLink {
 public:
  /// Virtual stage v lives on rank v mod pp of `pp` (held by reference); `stages` virtual stages in all.
  StageLink(const dist::Group& pp, int stages);
  StageLink(dist::Group&&, int) = delete;

  /// Sends virtual stage `stage`'s output of micro-batch `micro` (whose tokens are shaped `tokens`) to the next stage's
  /// rank. The first output of a token shape is preceded by its shape and dtype: the stages agree on them once.
  void send_output(int stage, int micro, const at::Tensor& output, at::IntArrayRef tokens);
  /// Receives virtual stage `stage - 1`'s output of micro-batch `micro`, as a leaf that requires a gradient.
  at::Tensor receive_input(int stage, int micro, at::IntArrayRef tokens);
  /// Sends the gradient of virtual stage `stage`'s input of micro-batch `micro` to the previous stage's rank.
  void send_input_gradient(int stage, int micro, const at::Tensor& gradient);
  /// Receives the gradient of virtual stage `stage`'s output `output` of micro-batch `micro` from the next stage.
  at::Tensor receive_output_gradient(int stage, int micro, const at::Tensor& output);
  /// Waits for every send (at the end of a step: their buffers may then go).
  void finish();
  /// Seconds spent waiting in receives since the last call.
  double take_wait_seconds();

 private:
  int rank_of(int stage) const { return stage % group_.size(); }
  /// A transfer's tag: unique within a step for (stage, micro-batch, what).
  int tag(int stage, int micro, int what) const { return ((micro * stages_ + stage) * 3) + what; }
  /// Receives `what` into `into`; a failure names this stage and the one it waited for.
  void receive(at::Tensor& into, int from, int tag, const std::string& what);

  const dist::Group& group_;
  int stages_;
  std::vector<dist::PendingCollective> sends_;
  /// (stage, token shape) -> the output's shape and dtype, once agreed.
  std::map<std::tuple<int, std::vector<int64_t>>, std::pair<std::vector<int64_t>, at::ScalarType>> agreed_;
  std::set<std::tuple<int, std::vector<int64_t>>> announced_;  ///< (stage, token shape) whose shape was sent
  std::chrono::steady_clock::duration waited_{};
};

}  // namespace kforge::parallel
