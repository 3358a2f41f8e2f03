// A byte-level BPE tokenizer (tokenizer.json or .tiktoken): added tokens are cut out of the text first, the text
// between them is NFC-normalized where configured, pre-tokenized by regex and merged piece by piece.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "data/bpe_model.h"
#include "data/pretokenizer.h"
#include "data/tokenizer_backend.h"

namespace kforge::data {

struct AddedToken {
  std::string content;  ///< UTF-8, matched in the text as is and decoded as is
  int id;
};

class BpeTokenizer final : public TokenizerBackend {
 public:
  struct Options {
    std::string kind;                 ///< "hf-bpe" or "tiktoken"
    std::string name;                 ///< e.g. "cl100k_base", or tokenizer_config.json's tokenizer_class
    std::string path;                 ///< the file, for messages
    std::vector<AddedToken> added;    ///< tokens outside the merges (special tokens and the like)
    bool match_added_in_text = true;  ///< cut added tokens out of the text (leftmost, then longest) before BPE
    bool nfc = false;                 ///< NFC-normalize the text between added tokens
    SpecialTokenIds special;
  };

  BpeTokenizer(BpeModel model, Pretokenizer pretokenizer, Options options);

  std::vector<int> encode(std::string_view text) const override;
  std::string decode(const std::vector<int>& ids) const override;
  int vocab_size() const override { return vocab_size_; }
  SpecialTokenIds special_ids() const override { return options_.special; }
  std::string kind() const override { return options_.kind; }
  std::string describe() const override;

 private:
  void encode_ordinary(std::string_view text, std::vector<int>& ids) const;
  std::string_view token_text(int id) const;

  BpeModel model_;
  Pretokenizer pretokenizer_;
  Options options_;
  int vocab_size_;
  std::array<std::vector<size_t>, 256> added_by_first_byte_;  ///< indices into options_.added, longest first
  std::vector<int> added_index_of_id_;                        ///< id -> index into options_.added, or -1
};

}  // namespace kforge::data
