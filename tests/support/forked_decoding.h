// A model's decode-state forks against its forward: how far the logits of forked copies are from the whole sequences'.
#pragma once

#include "kforge/sdk/model.h"

namespace kforge::test {

/// Two contexts of 6 tokens decoded in one state, forked into 2 copies each (rows c0, c0, c1, c1), each copy continued
/// by its own 4 tokens (3, then 1); then the original state continued by the first copy's tokens, which the fork must
/// have left unchanged. Returns the largest |logit - forward's| over the contexts, the copies and the original state,
/// forward() running each whole sequence. Tokens are drawn in [0, vocab) from the global generator; no gradients.
double forked_decoding_error(sdk::Model& model, int64_t vocab);

}  // namespace kforge::test
