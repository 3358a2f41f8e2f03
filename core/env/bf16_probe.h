// How much slower LibTorch's bf16 GEMMs run than fp32 on this CPU, and the warning for a bf16 run on a CPU
// without bf16 hardware (LibTorch then emulates bf16: 30x slower steps on AVX2 Zen 3 through at::linear).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace kforge::env {

/// Time of a bf16 at::mm over the time of the same fp32 one (best of a few 384^3 products each, on
/// the current intra-op threads; well under 0.5 s in all). > 1: bf16 is slower.
double bf16_gemm_slowdown();

/// The warning for [train] mixed_precision = "bf16": present exactly when the CPU has no native
/// bf16; `slowdown` (bf16_gemm_slowdown, or a test's value) is called only then. A slowdown that throws (LibTorch's
/// bf16 GEMM failing) gives a warning naming the failure instead of stopping the run.
std::optional<std::string> bf16_warning(bool native_bf16, const std::function<double()>& slowdown);

}  // namespace kforge::env
