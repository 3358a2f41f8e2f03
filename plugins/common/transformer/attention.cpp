// Attention: projections, QK-norm, RoPE, then the tiled or the explicit causal GQA attention
// (LibTorch 1.13 has no SDPA).
#include "attention.h"

#include <ATen/ATen.h>

#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "causal_softmax.h"
#include "document_starts.h"
#include "flash_attention.h"
#include "kforge/sdk/error.h"
#include "library_attention.h"
#include "rope.h"
#include "tensor_split.h"

namespace kforge::builtin::models {

Attention::Attention(const ModelConfig& c)
    : n_heads_(c.n_heads),
      n_kv_heads_(c.n_kv_heads),
      head_dim_(c.head_dim()),
      backend_(c.sdpa_backend),
      fused_(c.fused_kernels) {
  const LinearBackend linear = dense_linear_backend(c.linear_backend, c.float8);
  q_proj_ = register_module("q_proj", std::make_shared<Linear>(c.dim, n_heads_ * head_dim_, linear));
  k_proj_ = register_module("k_proj", std::make_shared<Linear>(c.dim, n_kv_heads_ * head_dim_, linear));
  v_proj_ = register_module("v_proj", std::make_shared<Linear>(c.dim, n_kv_heads_ * head_dim_, linear));
  o_proj_ = register_module("o_proj", std::make_shared<Linear>(n_heads_ * head_dim_, c.dim, linear));
  if (c.qk_norm) {
    // KempnerForge builds these with the model's norm_eps (1e-5 by default).
    q_norm_ = register_module("q_norm", std::make_shared<RMSNorm>(head_dim_, c.norm_eps, c.fused_kernels));
    k_norm_ = register_module("k_norm", std::make_shared<RMSNorm>(head_dim_, c.norm_eps, c.fused_kernels));
  }
}

at::Tensor Attention::forward(const at::Tensor& x, const at::Tensor& cos, const at::Tensor& sin, KVCache* cache,
                              size_t layer, const BlockCapture* capture, const at::Tensor& doc_starts) {
  const at::Tensor in = split_.in(x);  // every position, under sequence parallelism too
  const int64_t batch = in.size(0);
  const int64_t seq = in.size(1);
  at::Tensor q = q_proj_->forward(in).view({batch, seq, n_heads_, head_dim_});
  at::Tensor k = k_proj_->forward(in).view({batch, seq, n_kv_heads_, head_dim_});
  at::Tensor v = v_proj_->forward(in).view({batch, seq, n_kv_heads_, head_dim_});
  if (q_norm_) {
    q = q_norm_->forward(q);
    k = k_norm_->forward(k);
  }
  // Under CPU autocast the projections come out in bf16 while x, and so cos/sin, stay fp32: rotate
  // in the projections' dtype so q, k and v agree.
  const at::Tensor c = cos.to(q.scalar_type()), s = sin.to(q.scalar_type());
  // (B, heads, S, hd); apply_rope returns contiguous tensors in that layout.
  q = apply_rope(q.transpose(1, 2), c, s, fused_);
  k = apply_rope(k.transpose(1, 2), c, s, fused_);
  v = v.transpose(1, 2).contiguous();
  if (cache) std::tie(k, v) = cache->update(layer, k, v);
  if (capture && capture->wants(BlockPoint::attention)) {
    capture->take(BlockPoint::attention, attention_probabilities(q, k, doc_starts));
  }
  // (B, H, S, hd): under context parallelism over the ring; else LibTorch's fused kernel on an accelerator, the CPU's
  // tiled kernel or the explicit product.
  const at::Tensor out = ring_                                         ? ring_attention(q, k, v, *ring_, doc_starts)
                         : use_library_attention(q, k.size(2))         ? library_attention(q, k, v, doc_starts)
                         : use_tiled_attention(backend_, q, k.size(2)) ? flash_attention(q, k, v, {}, doc_starts)
                                                                       : causal_attention(q, k, v, fused_, doc_starts);
  const at::Tensor projected = o_proj_->forward(out.transpose(1, 2).reshape({batch, seq, n_heads_ * head_dim_}));
  return split_.out(projected);
}

std::vector<sdk::TensorShard> Attention::split(const TensorSplit& split) {
  split_ = split;
  const sdk::TensorParallel& tp = *split.tp;
  if (q_norm_) {  // each rank's heads give its part of the shared norm weights' gradients
    q_norm_->sum_gradients_over(tp);
    k_norm_->sum_gradients_over(tp);
  }
  n_heads_ /= tp.size();
  n_kv_heads_ /= tp.size();
  return {keep_slice(q_proj_->weight(), "q_proj.weight", 0, tp, "[model] n_heads x head_dim"),
          keep_slice(k_proj_->weight(), "k_proj.weight", 0, tp, "[model] n_kv_heads x head_dim"),
          keep_slice(v_proj_->weight(), "v_proj.weight", 0, tp, "[model] n_kv_heads x head_dim"),
          keep_slice(o_proj_->weight(), "o_proj.weight", 1, tp, "[model] n_heads x head_dim")};
}

bool use_tiled_attention(const std::string& backend, const at::Tensor& q, int64_t keys) {
  if (backend == "math" || !flash_attention_supports(q)) return false;
  if (backend == "flash") return true;
  // "auto" (and the CUDA-only names): in bf16 on a CPU with bf16 instructions oneDNN's batched GEMMs
  // make the explicit product faster up to kAutoMathMaxKeys keys (measured: 12% shorter debug-shape
  // steps at 512); beyond, its S x S scores cost too much memory. Without them LibTorch emulates bf16
  // GEMMs slowly, and the tiled kernel's fp32 GEMMs win at every length.
  return q.scalar_type() != at::kBFloat16 || keys > kAutoMathMaxKeys || !cpu_has_bf16_instructions();
}

at::Tensor attention_probabilities(const at::Tensor& q, const at::Tensor& k, const at::Tensor& doc_starts) {
  const int64_t seq = q.size(2), keys = k.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(3)));
  const at::Tensor k_heads = k.to(at::kFloat).repeat_interleave(q.size(1) / k.size(1), /*dim=*/1);
  const at::Tensor scores = at::matmul(q.to(at::kFloat), k_heads.transpose(-2, -1)) * scale;  // (B, H, Sq, Sk)
  const at::Tensor visible = visible_keys(seq, keys, doc_starts, q.options());
  return scores.masked_fill(visible.logical_not(), -std::numeric_limits<float>::infinity()).softmax(-1);
}

at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool fused,
                            const at::Tensor& doc_starts) {
  const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), hd = q.size(3);
  const int64_t kv_heads = k.size(1), keys = k.size(2);
  const int64_t group = heads / kv_heads;
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  if (doc_starts.defined() && (keys != seq || doc_starts.sizes() != at::IntArrayRef{batch, seq})) {
    throw sdk::Error("attention: document starts " + c10::str(doc_starts.sizes()) + " need (B, S) = (" +
                     std::to_string(batch) + ", " + std::to_string(seq) + ") and as many keys as queries (no KV " +
                     "cache), got " + std::to_string(keys) + " keys");
  }
  // Heads kv*group .. kv*group+group-1 share kv head `kv`: fold the group into the query rows.
  const at::Tensor q_heads = q.reshape({batch, kv_heads, group, seq, hd});
  std::vector<at::Tensor> outputs;
  // Query blocks skip the keys after their last query: kQueryBlock-row blocks compute about
  // (1 + 1/blocks) / 2 of the S x Sk products instead of all of them. With packed documents they also skip
  // the keys before the earliest document start of their first query over the batch.
  for (int64_t begin = 0; begin < seq; begin += kQueryBlock) {
    const int64_t rows = std::min(kQueryBlock, seq - begin);
    const int64_t seen = keys - seq + begin + rows;  // keys visible to the block's last query
    at::Tensor first_keys;                           // packed documents: each query's first key, from `from` on
    int64_t from = 0;
    if (doc_starts.defined()) {
      const at::Tensor starts = doc_starts.narrow(1, begin, rows);
      from = starts.select(1, 0).min().item<int64_t>();
      first_keys = (starts - from).contiguous();
    }
    const at::Tensor qg = q_heads.narrow(3, begin, rows).reshape({batch, kv_heads, group * rows, hd});
    const at::Tensor scores = at::matmul(qg, k.narrow(2, from, seen - from).transpose(-2, -1));  // (B, KV, G*rows, ·)
    // Row r is query position seen - rows + r % rows: it sees the keys up to that one.
    const at::Tensor probs = causal_softmax(scores, scale, rows, fused, first_keys).to(v.scalar_type());
    outputs.push_back(at::matmul(probs, v.narrow(2, from, seen - from)).reshape({batch, heads, rows, hd}));
  }
  return outputs.size() == 1 ? outputs.front() : at::cat(outputs, 2);
}

}  // namespace kforge::builtin::models
