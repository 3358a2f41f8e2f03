// The interface behind kforge::data::Tokenizer: one implementation per kind of tokenizer file
// (SentencePiece in sentencepiece_tokenizer.h, byte-level BPE in bpe_tokenizer.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::data {

struct SpecialTokenIds {
  int eos = -1, bos = -1, unk = -1, pad = -1;  ///< -1: the tokenizer has none
};

class TokenizerBackend {
 public:
  virtual ~TokenizerBackend() = default;
  virtual std::vector<int> encode(std::string_view text) const = 0;  ///< thread-safe
  virtual std::string decode(const std::vector<int>& ids) const = 0;
  virtual int vocab_size() const = 0;
  virtual SpecialTokenIds special_ids() const = 0;
  virtual std::string kind() const = 0;      ///< "sentencepiece", "hf-bpe" or "tiktoken"
  virtual std::string describe() const = 0;  ///< one line: what was loaded (vocabulary, merges, special tokens)
};

}  // namespace kforge::data
