// Tokenizer: picks the backend by the file's content and forwards to it.
#include "data/tokenizer.h"

#include <fmt/format.h>

#include <fstream>

#include "data/hf_tokenizer_json.h"
#include "data/sentencepiece_tokenizer.h"
#include "data/tiktoken_file.h"
#include "data/tokenizer_backend.h"
#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

/// A JSON document starts with '{' after any whitespace; a SentencePiece model (protobuf) starts with a field tag.
bool looks_like_json(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  char c = 0;
  while (in.get(c) && (c == ' ' || c == '\n' || c == '\r' || c == '\t')) {
  }
  return in && c == '{';
}

std::unique_ptr<TokenizerBackend> load_tokenizer(const std::filesystem::path& path) {
  if (looks_like_json(path)) return load_hf_tokenizer_json(path);
  if (path.extension() == ".tiktoken" || looks_like_tiktoken_file(path)) return load_tiktoken_file(path);
  return load_sentencepiece_model(path);
}

}  // namespace

Tokenizer::Tokenizer(const std::filesystem::path& model) : path_(model) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(model, ec)) {
    throw sdk::Error(
        fmt::format("tokenizer '{}' does not exist (give a SentencePiece .model, a Hugging Face "
                    "tokenizer.json or a .tiktoken file)",
                    model.string()));
  }
  impl_ = load_tokenizer(model);
}

Tokenizer::~Tokenizer() = default;
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;

std::vector<int> Tokenizer::encode(std::string_view text) const { return impl_->encode(text); }
std::string Tokenizer::decode(const std::vector<int>& ids) const { return impl_->decode(ids); }

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  std::vector<int> narrow;
  narrow.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size()) {
      throw sdk::Error(
          fmt::format("tokenizer '{}': id {} is outside the vocabulary [0, {})", path_.string(), id, vocab_size()));
    }
    narrow.push_back(static_cast<int>(id));
  }
  return decode(narrow);
}

int Tokenizer::vocab_size() const { return impl_->vocab_size(); }
int Tokenizer::eos_id() const { return impl_->special_ids().eos; }
int Tokenizer::bos_id() const { return impl_->special_ids().bos; }
int Tokenizer::unk_id() const { return impl_->special_ids().unk; }
int Tokenizer::pad_id() const { return impl_->special_ids().pad; }
std::string Tokenizer::kind() const { return impl_->kind(); }
std::string Tokenizer::describe() const { return impl_->describe(); }

}  // namespace kforge::data
