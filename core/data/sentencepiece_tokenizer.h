// A SentencePiece .model as a TokenizerBackend. SentencePiece runs inside libkforge-sentencepiece.so, loaded on
// first use (see sentencepiece_shim/); train_tokenizer (tokenizer.h) lives here too.
#pragma once

#include <filesystem>
#include <memory>

#include "data/tokenizer_backend.h"

namespace kforge::data {

/// Throws sdk::Error naming the file when SentencePiece cannot load it.
std::unique_ptr<TokenizerBackend> load_sentencepiece_model(const std::filesystem::path& path);

}  // namespace kforge::data
