// Mixed precision for the step: [train] mixed_precision -> the autocast dtype, and an RAII guard that runs the
// scope's ops under autocast on the CPU and on CUDA (parameters, gradients and optimizer state stay fp32).
#pragma once

#include <c10/core/ScalarType.h>

#include <optional>
#include <string>

namespace kforge::parallel {

/// "bf16" and "fp8" -> bfloat16 (fp8's float8 linears run inside it), "fp16" -> float16 (with dynamic loss scaling,
/// loss_scaler.h), "fp32" -> none (no autocast). Throws sdk::ConfigError naming [train] mixed_precision for any other
/// value.
std::optional<at::ScalarType> autocast_dtype(const std::string& mixed_precision);

/// While alive (and given a dtype), eligible ops (matmul, linear, ...) run in that dtype, as torch.autocast("cpu",
/// dtype) and torch.autocast("cuda", dtype) nested do: each device's ops autocast on that device; restores the
/// previous autocast state on exit. Nests. For float16 only CUDA autocasts (LibTorch 1.13's CPU autocast refuses
/// float16, having no float16 CPU kernels): the mark by which the built-in projections on the CPU round to fp16
/// themselves.
class AutocastGuard {
 public:
  explicit AutocastGuard(std::optional<at::ScalarType> dtype);
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;
  ~AutocastGuard();

 private:
  bool active_;
  bool prev_cpu_enabled_ = false, prev_cuda_enabled_ = false;
  at::ScalarType prev_cpu_dtype_ = at::kBFloat16, prev_cuda_dtype_ = at::kHalf;
};

/// The autocast dtype in effect now (CPU or CUDA), or none.
std::optional<at::ScalarType> active_autocast();

}  // namespace kforge::parallel
