// Tokenizer: a SentencePiece .model, a Hugging Face byte-level BPE tokenizer.json or a tiktoken .tiktoken rank
// file (load, encode, decode) for prepare-data, training and generate; and SentencePiece training.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::data {

class TokenizerBackend;

class Tokenizer {
 public:
  /// Loads `model` by its content: a .tiktoken rank file (lines `base64 rank`), a tokenizer.json (JSON), else a
  /// SentencePiece model. Throws kforge::sdk::Error naming the file on failure.
  explicit Tokenizer(const std::filesystem::path& model);
  ~Tokenizer();
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;

  std::vector<int> encode(std::string_view text) const;  ///< thread-safe
  std::string decode(const std::vector<int>& ids) const;
  std::string decode(const std::vector<int64_t>& ids) const;

  int vocab_size() const;  ///< one past the highest id
  int eos_id() const;      ///< -1 when the model has none
  int bos_id() const;
  int unk_id() const;
  int pad_id() const;
  const std::filesystem::path& path() const { return path_; }
  std::string kind() const;      ///< "sentencepiece", "hf-bpe" or "tiktoken"
  std::string describe() const;  ///< one line for "tokenizer: loaded <path> as <describe()>"

 private:
  std::filesystem::path path_;
  std::unique_ptr<const TokenizerBackend> impl_;
};

struct TokenizerTrainOptions {
  std::vector<std::filesystem::path> inputs;  ///< text files, one sentence per line
  std::filesystem::path model_prefix;         ///< writes PREFIX.model and PREFIX.vocab
  int vocab_size = 8000;
  std::string model_type = "bpe";  ///< bpe | unigram
  int num_threads = 2;
  int64_t input_sentence_size = 2'000'000;  ///< lines sampled for training (0: all)
  bool quiet = true;                        ///< silence SentencePiece's own progress log
};

/// Trains a SentencePiece model (unk 0, bos 1, eos 2; byte fallback from vocab 1024 up) and returns
/// PREFIX.model. Throws kforge::sdk::Error with SentencePiece's message (e.g. vocab too large).
std::filesystem::path train_tokenizer(const TokenizerTrainOptions& options);

}  // namespace kforge::data
