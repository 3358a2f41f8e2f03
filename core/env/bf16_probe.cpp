// The bf16-vs-fp32 GEMM probe and its warning (see bf16_probe.h).
#include "env/bf16_probe.h"

#include <fmt/format.h>

#include <exception>

#include "env/gemm_rate.h"

namespace kforge::env {

double bf16_gemm_slowdown() {
  constexpr int64_t kN = 384;  // emulated bf16 does ~3 GFLOP/s: 40 ms per product
  const double fp32 = gemm_gflops(kN, at::kFloat, 8, 0.05);
  const double bf16 = gemm_gflops(kN, at::kBFloat16, 3, 0.15);
  return fp32 / bf16;
}

std::optional<std::string> bf16_warning(bool native_bf16, const std::function<double()>& slowdown) {
  if (native_bf16) return std::nullopt;
  double ratio = 0;
  try {
    ratio = slowdown();
  } catch (const std::exception& e) {
    // Seen where oneDNN is capped below the CPU (ONEDNN_MAX_CPU_ISA) and LibTorch still routes bf16 GEMMs to it.
    return fmt::format(
        "LibTorch's bf16 GEMM fails on this machine ({}). kforge's built-in models multiply the bf16-rounded "
        "operands with fp32 GEMMs here and do not call it; a model plugin that calls LibTorch's GEMMs under autocast "
        "(at::linear, at::matmul) will fail. [train] mixed_precision = \"bf16\" is kept as configured; if the run "
        "fails, add --train.mixed_precision=fp32",
        e.what());
  }
  return fmt::format(
      "LibTorch's bf16 GEMMs run {:.1f}x {} than fp32 on this CPU (no avx512_bf16 or amx_bf16: LibTorch "
      "emulates bf16). kforge's built-in models multiply the bf16-rounded operands with fp32 GEMMs here instead, "
      "near fp32 speed; a model plugin that calls LibTorch's GEMMs under autocast (at::linear, at::matmul) pays the "
      "emulation. [train] mixed_precision = \"bf16\" is kept as configured; if the steps are slow, add "
      "--train.mixed_precision=fp32",
      ratio >= 1 ? ratio : 1 / ratio, ratio >= 1 ? "slower" : "faster");
}

}  // namespace kforge::env
