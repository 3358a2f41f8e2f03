// torch._scaled_mm, the GPU's float8 GEMM, for operands already rounded to float8 values: where LibTorch has it.
#pragma once

#include <ATen/ATen.h>

#include <optional>

#include "float8_cast.h"

namespace kforge::builtin::models {

/// True when hardware_scaled_mm takes (a [m, k], b [k, n]): a LibTorch with float8 dtypes and aten::_scaled_mm (2.1
/// on), CUDA tensors on a GPU with float8 GEMMs (compute capability 8.9 on), every size a multiple of 16.
bool hardware_scaled_mm_applies(const at::Tensor& a, const at::Tensor& b);

/// a b (float32 tensors holding values of formats a_format and b_format, so converting them to float8 is exact) through
/// aten::_scaled_mm with scale_a = a_inverse_scale, scale_b = b_inverse_scale and out_dtype bfloat16: the product
/// summed in fp32 by the GPU, times both scales, rounded to bf16. `fast_accumulation`: torchao's use_fast_accum (on
/// for the forward product). None where it does not apply, or where this LibTorch's aten::_scaled_mm asks for an
/// argument without a default that is not one of these: the caller computes the same product in fp32.
std::optional<at::Tensor> hardware_scaled_mm(const at::Tensor& a, const at::Tensor& b, Float8Format a_format,
                                             Float8Format b_format, const at::Tensor& a_inverse_scale,
                                             const at::Tensor& b_inverse_scale, bool fast_accumulation);

}  // namespace kforge::builtin::models
