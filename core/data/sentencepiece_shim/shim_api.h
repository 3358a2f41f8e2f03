/* C interface of libkforge-sentencepiece.so. Debian's libsentencepiece embeds its own protobuf
 * (3.14) and exports those symbols, which clash with LibTorch's libprotobuf (3.21) in one process.
 * The host therefore never links it: it dlmopen()s this shim into a new link namespace, where
 * SentencePiece binds to its own protobuf (and its own libc and libstdc++) and nothing leaks into the
 * host's symbol scope. Unlike RTLD_DEEPBIND this also works under ASan and TSan, whose runtimes
 * refuse DEEPBIND; the shim is built uninstrumented for that reason (core/CMakeLists.txt).
 * Strings and arrays returned by the shim are malloc()ed in its namespace; free them with kforge_spm_free. */
#ifndef KFORGE_SENTENCEPIECE_SHIM_API_H
#define KFORGE_SENTENCEPIECE_SHIM_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Trains a model from n key/value trainer flags; NULL on success, else the error message. */
typedef char* (*kforge_spm_train_fn)(const char* const* keys, const char* const* values, size_t n);
/* Loads a .model file; NULL with *error set on failure. */
typedef void* (*kforge_spm_load_fn)(const char* path, char** error);
typedef void (*kforge_spm_unload_fn)(void* processor);
/* Encodes text into *ids (n_ids entries); NULL on success, else the error message. */
typedef char* (*kforge_spm_encode_fn)(void* processor, const char* text, size_t length, int** ids, size_t* n_ids);
/* Decodes ids into *text; NULL on success, else the error message. */
typedef char* (*kforge_spm_decode_fn)(void* processor, const int* ids, size_t n_ids, char** text);
/* "vocab_size", "eos", "bos", "unk" or "pad"; -1 when the model has none. */
typedef int (*kforge_spm_query_fn)(void* processor, const char* what);
typedef void (*kforge_spm_free_fn)(void* pointer);

#ifdef __cplusplus
}
#endif

#endif
