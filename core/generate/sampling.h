// Sampling: KempnerForge's sample(): greedy at temperature 0, else temperature, top-k, top-p, multinomial.
#pragma once

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kforge::generate {

struct SamplingOptions {
  double temperature = 1.0;  ///< 0: argmax
  int64_t top_k = 0;         ///< 0: off
  double top_p = 1.0;        ///< 1: off
};

/// Throws sdk::Error naming the option when temperature < 0, top_k < 0 or top_p outside (0, 1].
void check(const SamplingOptions& options);

/// The logits a sampler draws from: logits/T, -inf below the k-th largest, then -inf where the sorted
/// cumulative probability before a token already reaches top_p. logits: (B, V) -> fp32 (B, V).
at::Tensor filter_logits(const at::Tensor& logits, const SamplingOptions& options);

/// One token per row: argmax at temperature 0, else multinomial(softmax(filter_logits)) drawn with
/// `generator` (a CPU generator; sampling runs on the CPU). logits: (B, V) -> int64 (B) on the CPU.
at::Tensor sample(const at::Tensor& logits, const SamplingOptions& options, at::Generator& generator);

}  // namespace kforge::generate
