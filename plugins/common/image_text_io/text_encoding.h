// The text half of a sample: prompt tokens then caption tokens (each tokenised on its own, so the prompt
// boundary is exact), cut to max_text_len + 1 tokens, turned into input_ids and next-token labels (labels[i]
// is the token at i + 1, -100 where that token is prompt or padding), right-padded to max_text_len.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace kforge::image_text {

/// Text to token ids (no special tokens). Called from the decode pool's threads at once: it must be thread-safe.
using Tokenize = std::function<std::vector<int64_t>(std::string_view)>;

/// The label of a position that has no loss.
inline constexpr int64_t kIgnoreLabel = -100;

struct TextOptions {
  int64_t max_text_len = 0;  ///< > 0: input_ids and labels always have this length
  int64_t pad_id = 0;        ///< fills input_ids after the text
  int64_t eos_id = -1;       ///< >= 0: appended to the caption, so the model learns to stop; -1: none
};

struct EncodedText {
  std::vector<int64_t> input_ids;  ///< max_text_len ids
  std::vector<int64_t> labels;     ///< max_text_len labels, kIgnoreLabel on prompt targets and padding
  int64_t loss_tokens = 0;         ///< labels that are not kIgnoreLabel
};

EncodedText encode_text(const Tokenize& tokenize, std::string_view prompt, std::string_view caption,
                        const TextOptions& options);

}  // namespace kforge::image_text
