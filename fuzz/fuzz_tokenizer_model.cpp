// Fuzz target: a SentencePiece .model file as the tokenizer loads and uses it (core/data/sentencepiece_shim).
// The shim is linked in directly, so libFuzzer's coverage reaches it (the host loads it uninstrumented into a
// separate link namespace); without LibTorch in the process its protobuf has nothing to clash with. SentencePiece itself (Debian's
// library) is not instrumented: only crashes show inside it, not silent memory errors.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "scratch_file.h"

extern "C" {
void* kforge_spm_load(const char* path, char** error);
void kforge_spm_unload(void* processor);
char* kforge_spm_encode(void* processor, const char* text, size_t length, int** ids, size_t* n_ids);
char* kforge_spm_decode(void* processor, const int* ids, size_t n_ids, char** text);
int kforge_spm_query(void* processor, const char* what);
void kforge_spm_free(void* pointer);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = kforge::fuzz::scratch_dir() / "fuzz.model";
  kforge::fuzz::write_bytes(file, data, size);
  char* error = nullptr;
  void* sp = kforge_spm_load(file.c_str(), &error);
  if (sp == nullptr) {
    kforge_spm_free(error);
    return 0;
  }
  // What training, prepare-data and generate ask of a loaded model.
  for (const char* what : {"vocab_size", "eos", "bos", "unk", "pad"}) kforge_spm_query(sp, what);
  const std::string text =
      "Call me Ishmael. Some years ago\n\t-- never mind how long precisely 1234 \xc3\xa9\xe2\x82\xac";
  int* ids = nullptr;
  size_t n = 0;
  if (char* failed = kforge_spm_encode(sp, text.data(), text.size(), &ids, &n)) {
    kforge_spm_free(failed);
  } else {
    std::vector<int> all(ids, ids + n);
    kforge_spm_free(ids);
    for (int id = 0; id < kforge_spm_query(sp, "vocab_size") && id < 64; ++id) all.push_back(id);
    char* decoded = nullptr;
    kforge_spm_free(kforge_spm_decode(sp, all.data(), all.size(), &decoded));
    kforge_spm_free(decoded);
  }
  kforge_spm_unload(sp);
  return 0;
}
