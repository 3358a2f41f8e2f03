// FSDP's float8 all-gather codec: a weight shard as OCP e4m3fn codes (one byte an element) under torchao's
// tensorwise scale, and the weight a rank holds once the codes are gathered.
#pragma once

#include <ATen/ATen.h>

namespace kforge::parallel {

/// The largest magnitude of `shard` rounded to bf16 (torchao's amax of the bf16 weight), as a 0-dim float32; 0 for an
/// empty shard. A weight's amax is the max of its shards'.
at::Tensor bf16_amax(const at::Tensor& shard);

/// torchao's amax_to_scale for e4m3: 448 / max(amax, 1e-12) in float64, rounded to float32 (0-dim).
at::Tensor e4m3_scale(const at::Tensor& amax);

/// The e4m3fn codes (uint8: sign, 4 exponent bits of bias 7, 3 mantissa bits) of float32(bf16(shard)) * scale,
/// clamped to +-448 and rounded to the nearest e4m3 value, ties to the even code, subnormals kept, -0 kept, NaN as
/// 0x7f: the values float8_linear's cast gives the whole weight, element by element. Flat, shard's numel.
at::Tensor encode_e4m3(const at::Tensor& shard, const at::Tensor& scale);

/// What a rank holds of a weight gathered as codes: each code's value times float32(1 / scale), float32, flat. The
/// float8 cast of the whole decoded weight (bf16 rounding, amax, scale, e4m3) gives back the same codes and scale:
/// rounded to bf16, the decoded values are within 2^-9 relative of code / scale, far inside e4m3's half spacing (over
/// 2^-5 relative), and the largest (code 448) rounds back to the amax. Exact for an amax at or above torchao's 1e-12
/// floor (a weight below it is all but zero).
at::Tensor decode_e4m3(const at::Tensor& codes, const at::Tensor& scale);

}  // namespace kforge::parallel
