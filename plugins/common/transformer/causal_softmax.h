// Causal softmax: the explicit attention's scale, causal mask and softmax as one autograd op, one
// pass per row each way (float32 or bfloat16 scores, computed in float).
#pragma once

#include <ATen/core/Tensor.h>

#include "vector_lanes.h"

namespace kforge::builtin::models {

/// softmax(scale * scores) over each row's visible keys, exactly 0 beyond them; scores [..., R, Sk],
/// whose row r is the query at position Sk - seq + r % seq and sees keys 0 .. Sk - seq + r % seq
/// (R a multiple of seq, Sk >= seq). Same dtype out; differentiable in scores. float32 and bfloat16 CPU
/// scores take the fused kernel unless `fused` is false ([model] fused_kernels); other dtypes (float64
/// gradient checks) and other devices the masked_fill + softmax composite. Packed documents: `first_keys`, int64 [B,
/// seq] for scores [B, ..., R, Sk], also hides the keys before first_keys[b][r % seq] from row r of batch b (the fused
/// kernel skips them; the composite masks with a [B, 1, seq, Sk] mask, as large as its scores' rows).
at::Tensor causal_softmax(const at::Tensor& scores, double scale, int64_t seq, bool fused = true,
                          const at::Tensor& first_keys = {});

/// The row kernels' vector width in use: the widest this CPU runs, unless a test chose another.
lanes::Width causal_softmax_width();
/// For tests of every width this CPU runs; throws sdk::Error for one it cannot.
void set_causal_softmax_width(lanes::Width width);

}  // namespace kforge::builtin::models
