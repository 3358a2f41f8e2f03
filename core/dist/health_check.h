// HealthCheck: [train] nccl_health_check_interval's liveness probe between steps, with its own short deadline
// ([train] nccl_health_check_timeout_sec); a rank that misses it is named (rank, host, address, pid) and the job ends.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>

#include "dist/group.h"
#include "dist/runtime.h"

namespace kforge::dist {

class HealthCheck {
 public:
  /// Off (after_step does nothing) when `interval` is 0 or the job has one rank. Else every rank creates the probe's
  /// group here, at the same point (after a barrier on the world group, so the short deadline does not count the
  /// ranks' start-up skew).
  HealthCheck(const Runtime& runtime, int64_t interval, std::chrono::milliseconds deadline);

  /// At a step that is a multiple of the interval, every rank sends a token (the step) to every other and waits for
  /// theirs, twice: a rank sends its second token only once it holds every first one, so a token that does not reach
  /// a peer within the deadline, in either direction, misses it (one round alone would let a steady one-way link
  /// delay hide in the ranks' skew). Throws sdk::Error naming the first peer that missed it (or sent another step).
  void after_step(int64_t step);

 private:
  void round(int64_t step, int tag);

  int64_t interval_ = 0;
  std::chrono::milliseconds deadline_{0};
  const Runtime& runtime_;
  std::unique_ptr<Group> group_;
};

}  // namespace kforge::dist
