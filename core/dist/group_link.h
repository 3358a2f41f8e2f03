// GroupLink: what the host's differentiable collectives (autograd functions) keep for their backward: the process
// group they run on and the clock their seconds count into.
#pragma once

#include <torch/autograd.h>

#include <chrono>
#include <cstdint>

#include "dist/group.h"

namespace kforge::dist {

/// Runs `fn`, adding the seconds it takes to `seconds`.
template <class Fn>
auto timed(double& seconds, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  auto out = fn();
  seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

/// The seconds counted into `seconds` so far; restarts the count.
inline double take(double& seconds) {
  const double s = seconds;
  seconds = 0;
  return s;
}

struct GroupLink {
  const Group* group;
  double* seconds;

  /// Stores the link in an autograd function's context (forward).
  void save(torch::autograd::AutogradContext* ctx) const {
    ctx->saved_data["group"] = reinterpret_cast<int64_t>(group);
    ctx->saved_data["seconds"] = reinterpret_cast<int64_t>(seconds);
  }
  /// The link save() stored (backward).
  static GroupLink of(torch::autograd::AutogradContext* ctx) {
    return {reinterpret_cast<const Group*>(ctx->saved_data["group"].toInt()),
            reinterpret_cast<double*>(ctx->saved_data["seconds"].toInt())};
  }
};

}  // namespace kforge::dist
