// The tokenizer of an exported model: the run's SentencePiece model as tokenizer.model, plus
// tokenizer_config.json (LlamaTokenizer) for Hugging Face.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

namespace kforge::interop {

/// Special token ids of the tokenizer written (none when it has no such token).
struct SpecialTokens {
  std::optional<int> bos_id, eos_id;
};

/// Copies the SentencePiece model `spm_model` to out/tokenizer.model and writes
/// out/tokenizer_config.json; checks it loads and that its vocabulary fits `vocab_size` (throws
/// sdk::Error naming the file otherwise).
SpecialTokens export_tokenizer(const std::filesystem::path& spm_model, const std::filesystem::path& out,
                               int64_t vocab_size, int64_t max_seq_len);

}  // namespace kforge::interop
