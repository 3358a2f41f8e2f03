// aten::_scaled_mm called through the dispatcher by its arguments' names (see hardware_scaled_mm.h).
#include "hardware_scaled_mm.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/version.h>

#include <string>
#include <vector>

#ifdef KFORGE_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif

namespace kforge::builtin::models {
namespace {

// Float8 dtypes came with LibTorch 2.1, and aten::_scaled_mm with them.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
constexpr bool kHasFloat8 = true;
at::ScalarType float8_dtype(Float8Format format) {
  return format == Float8Format::E4M3 ? at::ScalarType::Float8_e4m3fn : at::ScalarType::Float8_e5m2;
}
#else
constexpr bool kHasFloat8 = false;
at::ScalarType float8_dtype(Float8Format) { return at::kFloat; }
#endif

bool multiple_of_16(const at::Tensor& t) { return t.size(0) % 16 == 0 && t.size(1) % 16 == 0; }

// cuBLASLt's float8 GEMMs need compute capability 8.9 (Ada) or 9.0 (Hopper) on.
bool gpu_has_float8_gemm(const at::Tensor& t) {
#ifdef KFORGE_WITH_CUDA
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(t.device().index());
  return properties->major > 8 || (properties->major == 8 && properties->minor >= 9);
#else
  (void)t;
  return false;
#endif
}

}  // namespace

bool hardware_scaled_mm_applies(const at::Tensor& a, const at::Tensor& b) {
  return kHasFloat8 && a.is_cuda() && b.is_cuda() && a.dim() == 2 && b.dim() == 2 && multiple_of_16(a) &&
         multiple_of_16(b) && gpu_has_float8_gemm(a);
}

// aten::_scaled_mm's schema changed between LibTorch releases (2.1: optional scales, a (Tensor, Tensor) result; later:
// required scales, one Tensor): its arguments are filled by name and the first result taken, so both are called
// alike. self is row-major, mat2 column-major (the transpose of a contiguous [n, k]), as cuBLASLt wants them.
std::optional<at::Tensor> hardware_scaled_mm(const at::Tensor& a, const at::Tensor& b, Float8Format a_format,
                                             Float8Format b_format, const at::Tensor& a_inverse_scale,
                                             const at::Tensor& b_inverse_scale, bool fast_accumulation) {
  if (!hardware_scaled_mm_applies(a, b)) return std::nullopt;
  const auto op = c10::Dispatcher::singleton().findSchema({"aten::_scaled_mm", ""});
  if (!op) return std::nullopt;
  const at::Tensor self = a.to(float8_dtype(a_format)).contiguous();
  const at::Tensor mat2 = b.t().to(float8_dtype(b_format)).contiguous().t();
  std::vector<c10::IValue> stack;
  for (const c10::Argument& argument : op->schema().arguments()) {
    const std::string& name = argument.name();
    if (name == "self") stack.emplace_back(self);
    else if (name == "mat2") stack.emplace_back(mat2);
    else if (name == "scale_a") stack.emplace_back(a_inverse_scale);
    else if (name == "scale_b") stack.emplace_back(b_inverse_scale);
    else if (name == "out_dtype") stack.emplace_back(at::kBFloat16);
    else if (name == "use_fast_accum") stack.emplace_back(fast_accumulation);
    else if (argument.default_value()) stack.push_back(*argument.default_value());
    else return std::nullopt;  // a required argument this code does not know
  }
  op->callBoxed(&stack);
  return stack.front().toTensor();
}

}  // namespace kforge::builtin::models
