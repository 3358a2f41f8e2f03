// CPU autocast dtype and guard (see precision.h).
#include "train/precision.h"

#include <ATen/autocast_mode.h>

#include "kforge/sdk/error.h"

namespace kforge::train {

std::optional<at::ScalarType> cpu_autocast_dtype(const std::string& mixed_precision) {
  if (mixed_precision == "bf16") return at::kBFloat16;
  if (mixed_precision == "fp32") return std::nullopt;
  throw sdk::ConfigError("[train] mixed_precision = \"" + mixed_precision +
                         "\" is not available on the CPU (LibTorch 1.13 autocasts CPU ops to bfloat16 only); "
                         "set \"bf16\" or \"fp32\"");
}

// The same steps as torch.autocast("cpu").__enter__ / __exit__.
CpuAutocastGuard::CpuAutocastGuard(std::optional<at::ScalarType> dtype) : active_(dtype.has_value()) {
  if (!active_) return;
  prev_enabled_ = at::autocast::is_cpu_enabled();
  prev_dtype_ = at::autocast::get_autocast_cpu_dtype();
  at::autocast::set_cpu_enabled(true);
  at::autocast::set_autocast_cpu_dtype(*dtype);
  at::autocast::increment_nesting();
}

CpuAutocastGuard::~CpuAutocastGuard() {
  if (!active_) return;
  if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
  at::autocast::set_cpu_enabled(prev_enabled_);
  at::autocast::set_autocast_cpu_dtype(prev_dtype_);
}

}  // namespace kforge::train
