// SentencePieceTokenizer: a client of libkforge-sentencepiece.so (loaded into its own link namespace; see
// shim_api.h), and train_tokenizer.
#include "data/sentencepiece_tokenizer.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>

#include "data/sentencepiece_shim/shim_api.h"
#include "data/tokenizer.h"
#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

struct Shim {
  kforge_spm_train_fn train;
  kforge_spm_load_fn load;
  kforge_spm_unload_fn unload;
  kforge_spm_encode_fn encode;
  kforge_spm_decode_fn decode;
  kforge_spm_query_fn query;
  kforge_spm_free_fn free;
};

std::vector<std::filesystem::path> shim_candidates() {
  std::vector<std::filesystem::path> out;
  if (const char* env = std::getenv("KFORGE_SENTENCEPIECE_SHIM")) out.emplace_back(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) out.push_back(exe.parent_path().parent_path() / "lib" / "libkforge-sentencepiece.so");
  out.emplace_back(KFORGE_SPM_SHIM_BUILD_PATH);
  return out;
}

const Shim& shim() {
  static Shim instance;
  static std::once_flag once;
  std::call_once(once, [] {
    void* handle = nullptr;
    std::string tried;
    for (const auto& path : shim_candidates()) {
      if (!std::filesystem::exists(path)) {
        tried += "\n  " + path.string() + ": not found";
        continue;
      }
      handle = ::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed
      if (handle != nullptr) break;
      tried += "\n  " + path.string() + ": " + ::dlerror();
    }
    if (handle == nullptr) {
      throw sdk::Error(
          "cannot load the SentencePiece tokenizer library libkforge-sentencepiece.so (it ships in "
          "<prefix>/lib next to bin/kforge; KFORGE_SENTENCEPIECE_SHIM overrides the path):" +
          tried);
    }
    auto sym = [&](const char* name) {
      void* f = ::dlsym(handle, name);
      if (f == nullptr) throw sdk::Error(fmt::format("libkforge-sentencepiece.so lacks {}: rebuild kforge", name));
      return f;
    };
    instance = Shim{reinterpret_cast<kforge_spm_train_fn>(sym("kforge_spm_train")),
                    reinterpret_cast<kforge_spm_load_fn>(sym("kforge_spm_load")),
                    reinterpret_cast<kforge_spm_unload_fn>(sym("kforge_spm_unload")),
                    reinterpret_cast<kforge_spm_encode_fn>(sym("kforge_spm_encode")),
                    reinterpret_cast<kforge_spm_decode_fn>(sym("kforge_spm_decode")),
                    reinterpret_cast<kforge_spm_query_fn>(sym("kforge_spm_query")),
                    reinterpret_cast<kforge_spm_free_fn>(sym("kforge_spm_free"))};
  });
  return instance;
}

// Takes ownership of a shim-allocated error message.
std::string take(char* message) {
  std::string out = message != nullptr ? message : "";
  shim().free(message);
  return out;
}

void unload(void* processor) {
  if (processor != nullptr) shim().unload(processor);
}

class SentencePieceTokenizer final : public TokenizerBackend {
 public:
  explicit SentencePieceTokenizer(const std::filesystem::path& path) : path_(path), sp_(nullptr, unload) {
    char* error = nullptr;
    sp_.reset(shim().load(path.c_str(), &error));
    if (!sp_) {
      throw sdk::Error(
          fmt::format("cannot load tokenizer '{}' as a SentencePiece model: {}", path.string(), take(error)));
    }
  }

  std::vector<int> encode(std::string_view text) const override {
    int* ids = nullptr;
    size_t n = 0;
    if (char* error = shim().encode(sp_.get(), text.data(), text.size(), &ids, &n)) {
      throw sdk::Error(fmt::format("tokenizer '{}': encode failed: {}", path_.string(), take(error)));
    }
    std::vector<int> out(ids, ids + n);
    shim().free(ids);
    return out;
  }

  std::string decode(const std::vector<int>& ids) const override {
    char* text = nullptr;
    if (char* error = shim().decode(sp_.get(), ids.data(), ids.size(), &text)) {
      throw sdk::Error(fmt::format("tokenizer '{}': decode failed: {}", path_.string(), take(error)));
    }
    return take(text);
  }

  int vocab_size() const override { return shim().query(sp_.get(), "vocab_size"); }
  SpecialTokenIds special_ids() const override {
    return SpecialTokenIds{shim().query(sp_.get(), "eos"), shim().query(sp_.get(), "bos"),
                           shim().query(sp_.get(), "unk"), shim().query(sp_.get(), "pad")};
  }
  std::string kind() const override { return "sentencepiece"; }
  std::string describe() const override {
    const auto ids = special_ids();
    return fmt::format("sentencepiece: vocabulary {}, eos {}, bos {}, unk {}, pad {}", vocab_size(), ids.eos, ids.bos,
                       ids.unk, ids.pad);
  }

 private:
  std::filesystem::path path_;
  std::unique_ptr<void, void (*)(void*)> sp_;  ///< the shim's SentencePieceProcessor
};

}  // namespace

std::unique_ptr<TokenizerBackend> load_sentencepiece_model(const std::filesystem::path& path) {
  return std::make_unique<SentencePieceTokenizer>(path);
}

std::filesystem::path train_tokenizer(const TokenizerTrainOptions& o) {
  if (o.inputs.empty()) throw sdk::Error("train_tokenizer: no input files");
  if (o.model_type != "bpe" && o.model_type != "unigram") {
    throw sdk::ConfigError(fmt::format("tokenizer model type '{}' is not supported; use bpe or unigram", o.model_type));
  }
  if (o.vocab_size < 8) throw sdk::ConfigError(fmt::format("vocab size {} is too small", o.vocab_size));
  std::string inputs;
  for (const auto& p : o.inputs) {
    if (!inputs.empty()) inputs += ',';
    inputs += p.string();
  }
  // Byte fallback spends 256 ids on raw bytes; only worth it with room for real pieces.
  const bool byte_fallback = o.vocab_size >= 1024;
  const std::vector<std::pair<std::string, std::string>> args{
      {"input", inputs},
      {"model_prefix", o.model_prefix.string()},
      {"vocab_size", std::to_string(o.vocab_size)},
      {"model_type", o.model_type},
      {"num_threads", std::to_string(o.num_threads)},
      {"input_sentence_size", std::to_string(o.input_sentence_size)},
      {"shuffle_input_sentence", "true"},
      // Paragraph-per-line text has long lines; the default (4192 bytes) would skip them.
      {"max_sentence_length", "16384"},
      {"byte_fallback", byte_fallback ? "true" : "false"},
      // Without byte fallback every character seen must get a piece, or it decodes as unknown.
      {"character_coverage", byte_fallback ? "0.9995" : "1.0"},
      {"unk_id", "0"},
      {"bos_id", "1"},
      {"eos_id", "2"},
      {"pad_id", "-1"},
      {"minloglevel", o.quiet ? "1" : "0"},
  };
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : args) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  if (char* error = shim().train(keys.data(), values.data(), args.size())) {
    const std::string message = take(error);
    throw sdk::Error(fmt::format("training the {} tokenizer (vocab {}) on {} failed: {}{}", o.model_type, o.vocab_size,
                                 inputs, message,
                                 message.find("ocabulary size") != std::string::npos
                                     ? " (the corpus is too small for this vocabulary: lower --vocab-size)"
                                     : ""));
  }
  return std::filesystem::path(o.model_prefix.string() + ".model");
}

}  // namespace kforge::data
