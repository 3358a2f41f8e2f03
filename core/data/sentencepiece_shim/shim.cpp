// libkforge-sentencepiece.so: SentencePiece behind a C interface (see shim_api.h for why).
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>

#include "shim_api.h"

namespace {

char* copy(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

sentencepiece::SentencePieceProcessor* as_processor(void* p) {
  return static_cast<sentencepiece::SentencePieceProcessor*>(p);
}

}  // namespace

#define KFORGE_SHIM_EXPORT extern "C" __attribute__((visibility("default")))

KFORGE_SHIM_EXPORT char* kforge_spm_train(const char* const* keys, const char* const* values, size_t n) {
  try {
    std::unordered_map<std::string, std::string> args;
    for (size_t k = 0; k < n; ++k) args[keys[k]] = values[k];
    const auto status = sentencepiece::SentencePieceTrainer::Train(args);
    return status.ok() ? nullptr : copy(status.ToString());
  } catch (const std::exception& e) {
    return copy(e.what());
  }
}

// SentencePiece (and Darts inside it) throws on some damaged models: no exception crosses the C interface.
KFORGE_SHIM_EXPORT void* kforge_spm_load(const char* path, char** error) {
  try {
    auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
    const auto status = sp->Load(path);
    if (status.ok()) return sp.release();
    *error = copy(status.ToString());
  } catch (const std::exception& e) {
    *error = copy(std::string("damaged model: ") + e.what());
  }
  return nullptr;
}

KFORGE_SHIM_EXPORT void kforge_spm_unload(void* processor) { delete as_processor(processor); }

KFORGE_SHIM_EXPORT char* kforge_spm_encode(void* processor, const char* text, size_t length, int** ids, size_t* n_ids) {
  try {
    std::vector<int> out;
    const auto status = as_processor(processor)->Encode(std::string_view(text, length), &out);
    if (!status.ok()) return copy(status.ToString());
    *n_ids = out.size();
    *ids = static_cast<int*>(std::malloc(sizeof(int) * (out.empty() ? 1 : out.size())));
    std::memcpy(*ids, out.data(), sizeof(int) * out.size());
    return nullptr;
  } catch (const std::exception& e) {
    return copy(e.what());
  }
}

KFORGE_SHIM_EXPORT char* kforge_spm_decode(void* processor, const int* ids, size_t n_ids, char** text) {
  try {
    std::string out;
    const auto status = as_processor(processor)->Decode(std::vector<int>(ids, ids + n_ids), &out);
    if (!status.ok()) return copy(status.ToString());
    *text = copy(out);
    return nullptr;
  } catch (const std::exception& e) {
    return copy(e.what());
  }
}

KFORGE_SHIM_EXPORT int kforge_spm_query(void* processor, const char* what) {
  auto* sp = as_processor(processor);
  const std::string w = what;
  if (w == "vocab_size") return sp->GetPieceSize();
  if (w == "eos") return sp->eos_id();
  if (w == "bos") return sp->bos_id();
  if (w == "unk") return sp->unk_id();
  if (w == "pad") return sp->pad_id();
  return -1;
}

KFORGE_SHIM_EXPORT void kforge_spm_free(void* pointer) { std::free(pointer); }
