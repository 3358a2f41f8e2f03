// Causal GQA attention on an accelerator by LibTorch's own fused scaled_dot_product_attention (flash or
// memory-efficient kernels on CUDA, LibTorch 2.0 and later): the device's counterpart of the CPU-only tiled
// flash_attention. LibTorch 1.x has no such kernel; there a device runs the explicit causal_attention.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kforge::builtin::models {

/// Whether library_attention takes q (B, H, S, hd) against `keys` keys: a non-CPU tensor, as many keys as queries
/// (training and evaluation; a KV cache's decoding takes the explicit path), in a LibTorch that has the kernel.
bool use_library_attention(const at::Tensor& q, int64_t keys);

/// q (B, H, S, hd), k and v (B, KV, S, hd) with H a multiple of KV -> (B, H, S, hd): softmax(q k^T / sqrt(hd)) v
/// over the keys up to each query, and from its document's start on with doc_starts (int64 [B, S], else undefined).
at::Tensor library_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& doc_starts);

}  // namespace kforge::builtin::models
