// generate(): KempnerForge's KV-cache text generation (§3.3) over any model that supports decoding.
#pragma once

#include <cstdint>
#include <vector>

#include "generate/sampling.h"
#include "kforge/sdk/model.h"

namespace kforge::generate {

struct GenerateOptions {
  int64_t max_new_tokens = 64;
  double temperature = 1.0;
  int64_t top_k = 0;
  double top_p = 1.0;
  int64_t eos_id = -1;  ///< -1: none (always generate max_new_tokens)
  uint64_t seed = 0;    ///< seeds the sampling generator (not the global torch RNG)
  /// 0: sample from the model's whole vocabulary; else only ids below it (a model vocabulary
  /// padded beyond its tokenizer's must not produce ids the tokenizer cannot decode).
  int64_t vocab_limit = 0;
};

/// Prefills the prompts (equal lengths: there is no padding), then decodes one token at a time,
/// stopping after max_new_tokens or once every row has emitted eos_id (finished rows keep
/// generating). Runs without gradients in eval mode; the model's training mode is restored.
/// Returns each prompt followed by its continuation. Throws sdk::ConfigError when prompt length +
/// max_new_tokens exceeds the model's max_seq_len, sdk::Error on bad prompts or options.
std::vector<std::vector<int64_t>> generate(sdk::Model& model, const std::vector<std::vector<int64_t>>& prompts,
                                           const GenerateOptions& options);

}  // namespace kforge::generate
