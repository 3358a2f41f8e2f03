// Which library computes a projection's weight gradient, dW = dy^T x (a GEMM whose operands both run along the
// tokens): oneDNN's sgemm, or OpenBLAS's where a table measured on this kind of CPU says it is faster for that weight
// size. A table, not a start-up timing, so every run on a machine takes the same choice and a resume stays exact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace kforge::builtin::models {

enum class GemmLibrary { OneDnn, OpenBlas };

/// One measured kind of CPU: on `vendor` ("GenuineIntel", "AuthenticAMD") with OpenBLAS running `kernels`
/// (openblas_get_corename(), e.g. "SkylakeX"), OpenBLAS computes weight gradients of `min_weight_elements` or more
/// elements faster than oneDNN (benchmarks/gemm_choice.cpp measures it).
struct WeightGradientEntry {
  const char* vendor;
  const char* kernels;
  int64_t min_weight_elements;
};

/// The library for an [out, in] weight's gradient on this process's CPU and BLAS (oneDNN where no entry matches),
/// unless a test forced one.
GemmLibrary weight_gradient_library(int64_t out, int64_t in);

/// The table's entry for this CPU and BLAS, if any.
std::optional<WeightGradientEntry> weight_gradient_entry();

/// This CPU's vendor string (CPUID leaf 0) and the process's OpenBLAS kernel set ("" without OpenBLAS).
std::string cpu_vendor();
std::string openblas_kernels();

/// For tests: every weight gradient through `library`; nullopt restores the table's choice.
void force_weight_gradient_library(std::optional<GemmLibrary> library);

/// dW [out, in] = dy^T [out, rows] x [rows, in] for row-major float32 dy [rows, out] and x [rows, in], through the
/// library weight_gradient_library() picks.
void weight_gradient(int64_t out, int64_t in, int64_t rows, const float* dy, const float* x, float* dw);

}  // namespace kforge::builtin::models
