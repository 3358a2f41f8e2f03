// The weight-gradient GEMM's library (see weight_gradient_gemm.h).
#include "weight_gradient_gemm.h"

#include <cpuid.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>

#include "blas_gemm.h"

namespace kforge::builtin::models {
namespace {

// Measured with benchmarks/gemm_choice.cpp (2048 rows, 2 threads). Intel Xeon family 6 model 207 (AVX-512, no bf16
// instructions), OpenBLAS 0.3.21's SkylakeX kernels: OpenBLAS 1.03-1.3x faster from 512 x 1536 up (the 16384 x 512
// output head, 1536 x 512 and 512 x 1536 MLP weights), oneDNN 1.15x faster at 512 x 512 and 256 x 512.
constexpr WeightGradientEntry kTable[] = {
    {"GenuineIntel", "SkylakeX", 512 * 1536},
};

// -1: the table decides; otherwise a forced GemmLibrary.
std::atomic<int> forced{-1};

bool same_name(const std::string& a, const char* b) { return ::strcasecmp(a.c_str(), b) == 0; }

}  // namespace

std::string cpu_vendor() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return "";
  char name[13] = {};
  std::memcpy(name, &ebx, 4);
  std::memcpy(name + 4, &edx, 4);
  std::memcpy(name + 8, &ecx, 4);
  return name;
}

std::string openblas_kernels() {
  using Corename = char* (*)();
  const auto fn = reinterpret_cast<Corename>(::dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  const char* name = fn != nullptr ? fn() : nullptr;
  return name != nullptr ? name : "";
}

std::optional<WeightGradientEntry> weight_gradient_entry() {
  static const std::optional<WeightGradientEntry> entry = []() -> std::optional<WeightGradientEntry> {
    const std::string vendor = cpu_vendor(), kernels = openblas_kernels();
    for (const WeightGradientEntry& e : kTable) {
      if (vendor == e.vendor && same_name(kernels, e.kernels)) return e;
    }
    return std::nullopt;
  }();
  return entry;
}

GemmLibrary weight_gradient_library(int64_t out, int64_t in) {
  const int choice = forced.load(std::memory_order_relaxed);
  if (choice >= 0) return static_cast<GemmLibrary>(choice);
  const auto entry = weight_gradient_entry();
  return entry && out * in >= entry->min_weight_elements ? GemmLibrary::OpenBlas : GemmLibrary::OneDnn;
}

void force_weight_gradient_library(std::optional<GemmLibrary> library) {
  forced.store(library ? static_cast<int>(*library) : -1);
}

void weight_gradient(int64_t out, int64_t in, int64_t rows, const float* dy, const float* x, float* dw) {
  if (weight_gradient_library(out, in) == GemmLibrary::OpenBlas) {
    gemm_rowmajor(true, false, out, in, rows, 1.0f, dy, out, x, in, 0.0f, dw, in);
  } else {
    onednn_gemm_rowmajor(true, false, out, in, rows, 1.0f, dy, out, x, in, 0.0f, dw, in);
  }
}

}  // namespace kforge::builtin::models
