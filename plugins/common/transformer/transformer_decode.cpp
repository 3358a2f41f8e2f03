// Transformer cached decoding: start_decoding allocates a KVCache, decode runs a chunk against it, fork_decoding
// copies its rows.
#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <string>

#include "transformer.h"

namespace kforge::builtin::models {

std::unique_ptr<sdk::Model::DecodeState> Transformer::start_decoding(int64_t batch, int64_t max_len) {
  if (batch < 1 || max_len < 1) {
    throw sdk::Error("transformer: start_decoding needs batch >= 1 and max_len >= 1, got " + std::to_string(batch) +
                     " and " + std::to_string(max_len));
  }
  if (max_len > config_.max_seq_len) {
    throw sdk::ConfigError("decoding " + std::to_string(max_len) + " positions exceeds [model] max_seq_len = " +
                           std::to_string(config_.max_seq_len));
  }
  return std::make_unique<KVCache>(config_.n_layers, batch, max_len);
}

KVCache& Transformer::checked_cache(DecodeState& state, const at::Tensor& tokens, int64_t prefix_len) const {
  auto* cache = dynamic_cast<KVCache*>(&state);
  if (!cache) throw sdk::Error("transformer: decode was given a state not made by its start_decoding");
  if (tokens.dim() != 2 || tokens.size(0) != cache->batch()) {
    throw sdk::Error("transformer: decode expects tokens [" + std::to_string(cache->batch()) +
                     ", T] (the batch of start_decoding), got " + std::to_string(tokens.dim()) + " dims");
  }
  const int64_t positions = prefix_len + tokens.size(1);
  if (cache->fill() + positions > cache->capacity()) {
    throw sdk::Error("transformer: decoding " + std::to_string(positions) + " more positions after " +
                     std::to_string(cache->fill()) + " exceeds the cache's " + std::to_string(cache->capacity()) +
                     " positions (the max_len given to start_decoding)");
  }
  return *cache;
}

std::unique_ptr<sdk::Model::DecodeState> Transformer::fork_decoding(const DecodeState& state, int64_t copies) {
  const auto* cache = dynamic_cast<const KVCache*>(&state);
  if (!cache) throw sdk::Error("transformer: fork_decoding was given a state not made by its start_decoding");
  if (copies < 1) throw sdk::Error("transformer: fork_decoding needs copies >= 1, got " + std::to_string(copies));
  return cache->fork(copies);
}

at::Tensor Transformer::decode(const at::Tensor& tokens, DecodeState& state) {
  return run(at::Tensor(), tokens, &checked_cache(state, tokens, 0));
}

at::Tensor Transformer::decode_prefixed(const at::Tensor& prefix, const at::Tensor& tokens, DecodeState& state) {
  check_prefix(prefix, tokens);
  return run(prefix, tokens, &checked_cache(state, tokens, prefix.size(1)));
}

}  // namespace kforge::builtin::models
