// Loads a tiktoken rank file (each line `base64(token) rank`) as a byte-level BPE tokenizer. The file does not say
// which pre-tokenizer regex and special tokens go with it, so kforge recognises OpenAI's four by their number of
// ranks: r50k_base (50,256) and p50k_base (50,280) take GPT-2's regex and <|endoftext|> 50256; cl100k_base
// (100,256) its own regex, <|endoftext|> 100257, the FIM tokens 100258-100260 and <|endofprompt|> 100276;
// o200k_base (199,998) its own regex, <|endoftext|> 199999 and <|endofprompt|> 200018. <|endoftext|> is eos.
// Text is encoded as ordinary text (tiktoken's encode_ordinary): a "<|endoftext|>" in it is not the eos id.
#pragma once

#include <filesystem>
#include <memory>

#include "data/tokenizer_backend.h"

namespace kforge::data {

/// True when the file's first line reads as `base64 rank`.
bool looks_like_tiktoken_file(const std::filesystem::path& path);

/// Throws sdk::Error naming the file (and the line, for a malformed one, or the rank count, for an unknown file).
std::unique_ptr<TokenizerBackend> load_tiktoken_file(const std::filesystem::path& path);

}  // namespace kforge::data
