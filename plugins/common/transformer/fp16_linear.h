// Projections under [train] mixed_precision = "fp16" on the CPU, where LibTorch 1.13 has no float16 kernels: the
// numerics of an fp16 GEMM with fp32 accumulation (what CUDA autocast runs), on fp32 tensors.
#pragma once

#include <ATen/ATen.h>

namespace kforge::builtin::models {

/// Whether the step runs in fp16: CUDA autocast to float16 with CPU autocast off, the state the trainer's
/// AutocastGuard sets for [train] mixed_precision = "fp16" (LibTorch 1.13's CPU autocast refuses float16).
bool cpu_fp16_projections();

/// True when fp16_linear takes (x, weight): float32 CPU strided x [..., in] and a float32 2-D weight [out, in], while
/// cpu_fp16_projections().
bool fp16_linear_applies(const at::Tensor& x, const at::Tensor& weight);

/// x W^T as a float16 GEMM computes it: x and W rounded to fp16 (round to nearest even; beyond 65504, infinite),
/// products summed in fp32, the output rounded to fp16; returned as float32 so the fp32 ops after it (LibTorch's CPU
/// kernels have no float16) take it. Backward: the incoming gradient rounded to fp16, dx = fp16(dy W) and dW = fp16(dy^T
/// x) as float32, so a gradient beyond fp16's range overflows as on a GPU (what loss scaling guards). Saves x and W in
/// fp16. Throws sdk::Error unless fp16_linear_applies.
at::Tensor fp16_linear(const at::Tensor& x, const at::Tensor& weight);

}  // namespace kforge::builtin::models
