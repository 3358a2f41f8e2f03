// BlockCapture: what a TransformerBlock hands to its model's capture (kforge extract) while one is active.
#pragma once

#include <ATen/core/Tensor.h>

#include <array>
#include <cstddef>
#include <functional>
#include <string>

namespace kforge::builtin::models {

/// A block's hook points: "layers.{layer}.<name>" in the model's hook_points (plugin.cpp).
enum class BlockPoint { residual, attn_out, mlp_out, attention };

inline constexpr std::array<const char*, 4> kBlockPointNames = {"residual", "attn_out", "mlp_out", "attention"};

/// One block's view of an active capture: which of its points are wanted (decided once per forward)
/// and the model's sink for their values. Blocks get a null BlockCapture* when nothing is captured.
struct BlockCapture {
  std::string prefix;  ///< "layers.{layer}."
  std::array<bool, kBlockPointNames.size()> wanted{};
  std::function<void(const std::string& point, const at::Tensor& value)> sink;

  bool wants(BlockPoint point) const { return wanted[static_cast<size_t>(point)]; }
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
