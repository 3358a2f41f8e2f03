// Prompt and caption ids into input_ids and shifted, prompt-masked labels of a fixed length.
#include "image_text_io/text_encoding.h"

#include <fmt/format.h>

#include <algorithm>

#include "kforge/sdk/error.h"

namespace kforge::image_text {

EncodedText encode_text(const Tokenize& tokenize, std::string_view prompt, std::string_view caption,
                        const TextOptions& options) {
  if (options.max_text_len <= 0) {
    throw sdk::ConfigError(fmt::format("max_text_len = {} must be positive", options.max_text_len));
  }
  std::vector<int64_t> tokens = prompt.empty() ? std::vector<int64_t>{} : tokenize(prompt);
  const size_t prompt_tokens = tokens.size();
  const std::vector<int64_t> caption_ids = tokenize(caption);
  tokens.insert(tokens.end(), caption_ids.begin(), caption_ids.end());
  if (options.eos_id >= 0) tokens.push_back(options.eos_id);
  // max_text_len inputs predict the max_text_len tokens after them: one more token than the inputs.
  const size_t kept = std::min(tokens.size(), static_cast<size_t>(options.max_text_len) + 1);
  const size_t length = static_cast<size_t>(options.max_text_len);
  EncodedText text{std::vector<int64_t>(length, options.pad_id), std::vector<int64_t>(length, kIgnoreLabel), 0};
  for (size_t i = 0; i < std::min(kept, length); ++i) {
    text.input_ids[i] = tokens[i];
    // The last kept token is an input without a target when the text fits.
    if (i + 1 < kept && i + 1 >= prompt_tokens) {
      text.labels[i] = tokens[i + 1];
      ++text.loss_tokens;
    }
  }
  return text;
}

}  // namespace kforge::image_text
