// CPU mixed precision for the step: [train] mixed_precision -> the autocast dtype, and an RAII guard
// that runs the scope's ops under CPU autocast (parameters, gradients and optimizer state stay fp32).
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace kforge::train {

/// "bf16" -> bfloat16, "fp32" -> none (no autocast). Throws sdk::ConfigError naming
/// [train] mixed_precision for values the CPU cannot autocast to ("fp16", "fp8").
std::optional<at::ScalarType> cpu_autocast_dtype(const std::string& mixed_precision);

/// While alive (and given a dtype), eligible CPU ops (matmul, linear, ...) run in that dtype, as
/// torch.autocast("cpu", dtype) does; restores the previous autocast state on exit. Nests.
class CpuAutocastGuard {
 public:
  explicit CpuAutocastGuard(std::optional<at::ScalarType> dtype);
  CpuAutocastGuard(const CpuAutocastGuard&) = delete;
  CpuAutocastGuard& operator=(const CpuAutocastGuard&) = delete;
  ~CpuAutocastGuard();

 private:
  bool active_;
  bool prev_enabled_ = false;
  at::ScalarType prev_dtype_ = at::kBFloat16;
};

}  // namespace kforge::train
