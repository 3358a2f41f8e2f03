// Loads a Hugging Face tokenizer.json whose model is a byte-level BPE (GPT-2, Llama 3, Qwen style):
//   normalizer: null or NFC;
//   pre_tokenizer: ByteLevel (GPT-2's regex when use_regex, the default), or a Sequence of Split {Regex, Isolated}
//     and ByteLevel; add_prefix_space must be false;
//   model: BPE with a vocab of byte-level strings and merges as "a b" strings or ["a", "b"] pairs, ignore_merges;
//   added_tokens: cut out of the text before everything else (all of them, special or not, as Hugging Face does;
//     matched on the raw text), decoded as their content.
// Special ids: eos_token / bos_token / pad_token of the tokenizer_config.json next to the file when it names them
// (a string or {"content": ...}, a token of the file); else eos is the added token <|endoftext|>, <|end_of_text|>
// or </s> and bos <|begin_of_text|> or <s>, the first present; pad -1; unk is model.unk_token.
// Anything else is refused with an sdk::Error naming the file, the JSON path and the value.
#pragma once

#include <filesystem>
#include <memory>

#include "data/tokenizer_backend.h"

namespace kforge::data {

std::unique_ptr<TokenizerBackend> load_hf_tokenizer_json(const std::filesystem::path& path);

}  // namespace kforge::data
