// BlockCapture: what a TransformerBlock hands to its model's capture (kforge extract) while one is active.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstddef>
#include <functional>
#include <string>

namespace kforge::builtin::models {

/// A block's hook points: "layers.{layer}.<name>" in the model's hook_points (plugin.cpp). The router's
/// (router_*) exist on MoE layers only.
enum class BlockPoint {
  residual,
  attn_out,
  mlp_out,
  attention,
  attention_norm,
  mlp_norm,
  router_choices,
  router_weights,
  router_expert_counts
};

inline constexpr std::array<const char*, 9> kBlockPointNames = {
    "residual",       "attn_out", "mlp_out",           "attention",
    "attention_norm", "mlp_norm", "mlp.router.choices", "mlp.router.weights",
    "mlp.router.expert_counts"};
/// The first of the router's points (the rest follow it in BlockPoint).
inline constexpr BlockPoint kFirstRouterPoint = BlockPoint::router_choices;

/// One block's view of an active capture: which of its points are wanted (decided once per forward)
/// and the model's sink for their values. Blocks get a null BlockCapture* when nothing is captured.
struct BlockCapture {
  std::string prefix;  ///< "layers.{layer}."
  std::array<bool, kBlockPointNames.size()> wanted{};
  std::function<void(const std::string& point, const at::Tensor& value)> sink;

  bool wants(BlockPoint point) const { return wanted[static_cast<size_t>(point)]; }
  /// Whether any of the router's points is wanted.
  bool wants_routing() const {
    for (size_t p = static_cast<size_t>(kFirstRouterPoint); p < wanted.size(); ++p) {
      if (wanted[p]) return true;
    }
    return false;
  }
  /// Delivers `value` as prefix + the point's name when that point is wanted.
  void take(BlockPoint point, const at::Tensor& value) const {
    if (wants(point)) sink(prefix + kBlockPointNames[static_cast<size_t>(point)], value);
  }
};

/// `value`, handed to `capture` first when there is one: a sublayer's output tapped inside the
/// expression that uses it, so it lives no longer than without capture.
inline const at::Tensor& tap(const BlockCapture* capture, BlockPoint point, const at::Tensor& value) {
  if (capture) capture->take(point, value);
  return value;
}

}  // namespace kforge::builtin::models
