// BpeTokenizer: the added-token scan, NFC (nfc.h; invalid bytes pass through) and the pre-tokenizer -> BPE
// pipeline; decode concatenates the tokens' bytes, so decode(encode(x)) == x for any bytes NFC leaves alone.
#include "data/bpe_tokenizer.h"

#include <fmt/format.h>

#include <algorithm>

#include "data/nfc.h"
#include "kforge/sdk/error.h"

namespace kforge::data {

BpeTokenizer::BpeTokenizer(BpeModel model, Pretokenizer pretokenizer, Options options)
    : model_(std::move(model)), pretokenizer_(std::move(pretokenizer)), options_(std::move(options)) {
  vocab_size_ = model_.size();
  for (const auto& token : options_.added) vocab_size_ = std::max(vocab_size_, token.id + 1);
  added_index_of_id_.assign(vocab_size_, -1);
  for (size_t i = 0; i < options_.added.size(); ++i) {
    const auto& token = options_.added[i];
    if (token.content.empty() || token.id < 0) {
      throw sdk::Error(fmt::format("{}: an added token needs content and an id >= 0 (got '{}' with id {})",
                                   options_.path, token.content, token.id));
    }
    added_index_of_id_[token.id] = static_cast<int>(i);
    added_by_first_byte_[static_cast<uint8_t>(token.content[0])].push_back(i);
  }
  for (auto& bucket : added_by_first_byte_) {
    std::stable_sort(bucket.begin(), bucket.end(), [&](size_t a, size_t b) {
      return options_.added[a].content.size() > options_.added[b].content.size();
    });
  }
}

std::vector<int> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int> ids;
  ids.reserve(text.size() / 3 + 1);
  size_t segment = 0;
  for (size_t at = 0; options_.match_added_in_text && at < text.size();) {
    const auto& bucket = added_by_first_byte_[static_cast<uint8_t>(text[at])];
    const auto match = std::find_if(bucket.begin(), bucket.end(),
                                    [&](size_t i) { return text.substr(at).starts_with(options_.added[i].content); });
    if (match == bucket.end()) {
      ++at;
      continue;
    }
    encode_ordinary(text.substr(segment, at - segment), ids);
    ids.push_back(options_.added[*match].id);
    at += options_.added[*match].content.size();
    segment = at;
  }
  encode_ordinary(text.substr(segment), ids);
  return ids;
}

void BpeTokenizer::encode_ordinary(std::string_view text, std::vector<int>& ids) const {
  if (text.empty()) return;
  std::string normalized;
  if (options_.nfc && may_change_under_nfc(text)) {
    normalized = nfc_normalize(text);
    text = normalized;
  }
  thread_local std::vector<std::string_view> pieces;
  pieces.clear();
  pretokenizer_.split(text, pieces);
  for (const auto piece : pieces) model_.encode(piece, ids);
}

std::string_view BpeTokenizer::token_text(int id) const {
  if (id >= 0 && id < vocab_size_ && added_index_of_id_[id] >= 0) return options_.added[added_index_of_id_[id]].content;
  return model_.bytes(id);
}

std::string BpeTokenizer::decode(const std::vector<int>& ids) const {
  std::string out;
  for (int id : ids) {
    const auto text = token_text(id);
    if (text.empty()) {
      throw sdk::Error(
          fmt::format("tokenizer '{}': id {} is not a token (vocabulary size {})", options_.path, id, vocab_size_));
    }
    out += text;
  }
  return out;
}

std::string BpeTokenizer::describe() const {
  const auto name = [&](int id) { return id < 0 ? std::string("none") : fmt::format("{} '{}'", id, token_text(id)); };
  return fmt::format("{} {}: vocabulary {} ({} added tokens), {}{}, eos {}, bos {}, pad {}", options_.kind,
                     options_.name, vocab_size_, options_.added.size(),
                     model_.merge_count() > 0 ? fmt::format("{} merges", model_.merge_count()) : "merges by rank",
                     options_.nfc ? ", NFC" : "", name(options_.special.eos), name(options_.special.bos),
                     name(options_.special.pad));
}

}  // namespace kforge::data
