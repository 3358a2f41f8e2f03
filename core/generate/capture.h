// Activation capture: one forward of a model with its named hook points recorded (kforge extract, kforge.Model).
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kforge/sdk/model.h"

namespace kforge::generate {

/// One forward of `tokens` [B, S] (eval mode, no gradients) with `points` captured: point -> value, each delivered
/// once, float32 (an integer point, e.g. an MoE router's choices, int64); `output`, when given, receives the
/// forward's output (the logits) as float32. Throws sdk::Error naming a point the forward did not deliver, or
/// delivered twice.
std::map<std::string, at::Tensor> capture(sdk::Model& model, const at::Tensor& tokens,
                                          const std::vector<std::string>& points, at::Tensor* output = nullptr);

/// Every hook point name of a model of `n_layers` blocks: its declared patterns with "{layer}" expanded, e.g.
/// "layers.{layer}.residual" -> "layers.0.residual", ... (the names capture() takes).
std::vector<std::string> hook_point_names(const std::vector<std::string>& patterns, int64_t n_layers);

}  // namespace kforge::generate
