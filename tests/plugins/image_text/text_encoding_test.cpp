// input_ids and labels: the prompt is masked from the loss, labels are the next token (not a copy of the
// input, KempnerForge's bug), the text is cut at max_text_len + 1 tokens and padded to max_text_len.
#include "image_text_io/text_encoding.h"

#include <gtest/gtest.h>

#include "image_fixtures.h"
#include "kforge/sdk/error.h"

namespace kforge::test {
namespace {

using image_text::encode_text;
using image_text::TextOptions;
constexpr int64_t I = image_text::kIgnoreLabel;

TEST(TextEncoding, PromptMaskedLabelsShiftedPadded) {
  // prompt "ab" + caption "cde" + eos 2, in 8 positions with pad 0.
  const auto text = encode_text(byte_tokenizer(), "ab", "cde", TextOptions{8, 0, 2});
  EXPECT_EQ(text.input_ids, (std::vector<int64_t>{'a', 'b', 'c', 'd', 'e', 2, 0, 0}));
  // Position 0 ('a') predicts 'b', a prompt token: no loss. 'b' predicts 'c', ... 'e' predicts eos; eos predicts
  // nothing.
  EXPECT_EQ(text.labels, (std::vector<int64_t>{I, 'c', 'd', 'e', 2, I, I, I}));
  EXPECT_EQ(text.loss_tokens, 4);
}

TEST(TextEncoding, LongTextFillsTheWindowWithOneTokenMoreForTheLastLabel) {
  const auto text = encode_text(byte_tokenizer(), "", "abcde", TextOptions{3, 0, -1});
  EXPECT_EQ(text.input_ids, (std::vector<int64_t>{'a', 'b', 'c'}));
  EXPECT_EQ(text.labels, (std::vector<int64_t>{'b', 'c', 'd'}));
  EXPECT_EQ(text.loss_tokens, 3);
}

TEST(TextEncoding, APromptFillingTheWindowLeavesNoLoss) {
  const auto text = encode_text(byte_tokenizer(), "abcdef", "xy", TextOptions{4, 9, -1});
  EXPECT_EQ(text.input_ids, (std::vector<int64_t>{'a', 'b', 'c', 'd'}));
  EXPECT_EQ(text.labels, (std::vector<int64_t>{I, I, I, I}));
  EXPECT_EQ(text.loss_tokens, 0);
  const auto empty = encode_text(byte_tokenizer(), "", "", TextOptions{2, 9, -1});
  EXPECT_EQ(empty.input_ids, (std::vector<int64_t>{9, 9}));
  EXPECT_EQ(empty.labels, (std::vector<int64_t>{I, I}));
}

TEST(TextEncoding, RefusesANonPositiveLength) {
  EXPECT_THROW(encode_text(byte_tokenizer(), "", "a", TextOptions{0, 0, -1}), sdk::ConfigError);
}

}  // namespace
}  // namespace kforge::test
