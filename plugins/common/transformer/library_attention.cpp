// LibTorch's fused attention for device tensors (see library_attention.h).
#include "library_attention.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include "document_starts.h"
#include "kforge/sdk/error.h"

namespace kforge::builtin::models {

bool use_library_attention(const at::Tensor& q, int64_t keys) {
  return TORCH_VERSION_MAJOR >= 2 && !q.device().is_cpu() && q.dim() == 4 && keys == q.size(2);
}

at::Tensor library_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& doc_starts) {
#if TORCH_VERSION_MAJOR >= 2
  // Every query head gets its kv head's keys and values (the kernel's own GQA needs LibTorch 2.5).
  const int64_t group = q.size(1) / k.size(1);
  const at::Tensor keys = group == 1 ? k : k.repeat_interleave(group, /*dim=*/1);
  const at::Tensor values = group == 1 ? v : v.repeat_interleave(group, /*dim=*/1);
  if (!doc_starts.defined()) return at::scaled_dot_product_attention(q, keys, values, {}, 0.0, /*is_causal=*/true);
  const at::Tensor visible = visible_keys(q.size(2), k.size(2), doc_starts, q.options());
  return at::scaled_dot_product_attention(q, keys, values, visible, 0.0, /*is_causal=*/false);
#else
  (void)q, (void)k, (void)v, (void)doc_starts;
  throw sdk::Error("attention: this LibTorch has no scaled_dot_product_attention (use_library_attention is false)");
#endif
}

}  // namespace kforge::builtin::models
