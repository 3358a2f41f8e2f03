// Autocast dtype and guard (see precision.h).
#include "parallel/precision.h"

#include <ATen/autocast_mode.h>

#include "kforge/sdk/error.h"

namespace kforge::parallel {

std::optional<at::ScalarType> autocast_dtype(const std::string& mixed_precision) {
  // fp8: the model's float8 linears (sdk::BuildContext::float8) inside bf16 autocast, KempnerForge's bf16 rest.
  if (mixed_precision == "bf16" || mixed_precision == "fp8") return at::kBFloat16;
  if (mixed_precision == "fp32") return std::nullopt;
  if (mixed_precision == "fp16") return at::kHalf;
  throw sdk::ConfigError("[train] mixed_precision = \"" + mixed_precision +
                         "\" is not a precision kforge trains in; set \"bf16\", \"fp16\", \"fp8\" or \"fp32\"");
}

// The same steps as torch.autocast("cpu").__enter__ and torch.autocast("cuda").__enter__ (and __exit__).
AutocastGuard::AutocastGuard(std::optional<at::ScalarType> dtype) : active_(dtype.has_value()) {
  if (!active_) return;
  prev_cpu_enabled_ = at::autocast::is_cpu_enabled();
  prev_cpu_dtype_ = at::autocast::get_autocast_cpu_dtype();
  prev_cuda_enabled_ = at::autocast::is_enabled();
  prev_cuda_dtype_ = at::autocast::get_autocast_gpu_dtype();
  // LibTorch 1.13's CPU autocast refuses float16 (it has no float16 CPU kernels): under fp16 it stays off, and CUDA's
  // float16 autocast alone marks the step, which the built-in projections on the CPU honour by rounding to fp16
  // themselves (cpu_fp16_projections in plugins/common/transformer).
  const bool cpu = *dtype != at::kHalf;
  at::autocast::set_cpu_enabled(cpu);
  if (cpu) at::autocast::set_autocast_cpu_dtype(*dtype);
  at::autocast::set_enabled(true);
  at::autocast::set_autocast_gpu_dtype(*dtype);
  at::autocast::increment_nesting();
}

AutocastGuard::~AutocastGuard() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(prev_cpu_enabled_);
  at::autocast::set_autocast_cpu_dtype(prev_cpu_dtype_);
  at::autocast::set_enabled(prev_cuda_enabled_);
  at::autocast::set_autocast_gpu_dtype(prev_cuda_dtype_);
}

std::optional<at::ScalarType> active_autocast() {
  if (at::autocast::is_cpu_enabled()) return at::autocast::get_autocast_cpu_dtype();
  if (at::autocast::is_enabled()) return at::autocast::get_autocast_gpu_dtype();
  return std::nullopt;
}

}  // namespace kforge::parallel
