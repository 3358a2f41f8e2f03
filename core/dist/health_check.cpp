// The between-steps liveness probe (see health_check.h).
#include "dist/health_check.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <vector>

#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::dist {

HealthCheck::HealthCheck(const Runtime& runtime, int64_t interval, std::chrono::milliseconds deadline)
    : interval_(runtime.world_size() > 1 ? interval : 0), deadline_(deadline), runtime_(runtime) {
  if (interval_ == 0) return;
  runtime.world().barrier();
  group_ = runtime.world_group("health", deadline_, "train.nccl_health_check_timeout_sec");
  log::get().info("health check: every {} steps, each rank hears from every other within {} s ([train] "
                  "nccl_health_check_interval, nccl_health_check_timeout_sec)",
                  interval_, deadline_.count() / 1000.0);
}

void HealthCheck::after_step(int64_t step) {
  if (interval_ == 0 || step % interval_ != 0) return;
  const int64_t first_tag = 2 * (step / interval_) % (int64_t{1} << 30);  // even: first_tag + 1 < 2^30 too
  round(step, static_cast<int>(first_tag));
  round(step, static_cast<int>(first_tag + 1));
}

void HealthCheck::round(int64_t step, int tag) {
  const int self = group_->rank(), size = group_->size();
  const at::Tensor token = at::full({1}, step, at::kLong);
  std::vector<PendingCollective> sends;
  for (int peer = 0; peer < size; ++peer) {
    if (peer != self) sends.push_back(group_->send(token, peer, tag));
  }
  for (int peer = 0; peer < size; ++peer) {
    if (peer == self) continue;
    const Peer& who = runtime_.peers().at(static_cast<size_t>(peer));
    const std::string named = fmt::format("{}, pid {},", describe(who), who.pid);
    at::Tensor theirs = at::empty({1}, at::kLong);
    try {
      group_->recv(theirs, peer, tag);
    } catch (const std::exception& e) {
      throw sdk::Error(fmt::format(
          "health check after step {}: {} did not answer rank {} within {} s ([train] nccl_health_check_timeout_sec): "
          "that process is stopped or hung, or its link is slow or down. Ending the job; a rerun resumes from the last "
          "checkpoint. ({})",
          step, named, self, deadline_.count() / 1000.0, e.what()));
    }
    if (theirs.item<int64_t>() != step) {
      throw sdk::Error(fmt::format("health check after step {}: {} is after step {}: the ranks diverged", step, named,
                                   theirs.item<int64_t>()));
    }
  }
  for (PendingCollective& send : sends) send.wait();
}

}  // namespace kforge::dist
