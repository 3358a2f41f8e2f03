// Fuzz target: a Hugging Face tokenizer.json (core/data/hf_tokenizer_json) as the tokenizer loads and uses it.
// Input: the tokenizer.json text; the lines after a line "#@tokenizer_config.json" are the tokenizer_config.json next
// to it (absent without that line).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "data/hf_tokenizer_json.h"
#include "input_sections.h"
#include "kforge/sdk/error.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path dir = kforge::fuzz::scratch_dir();
  std::filesystem::remove(dir / "tokenizer_config.json");
  for (const auto& section :
       kforge::fuzz::input_sections({reinterpret_cast<const char*>(data), size}, "tokenizer.json")) {
    if (section.name != "tokenizer.json" && section.name != "tokenizer_config.json") continue;
    kforge::fuzz::write_bytes(dir / section.name, reinterpret_cast<const uint8_t*>(section.text.data()),
                              section.text.size());
  }
  try {
    const auto tokenizer = kforge::data::load_hf_tokenizer_json(dir / "tokenizer.json");
    // What training, prepare-data and generate ask of a loaded tokenizer.
    tokenizer->describe();
    tokenizer->special_ids();
    auto ids = tokenizer->encode("Call me Ishmael. Some years ago\n\t-- 1234 <|endoftext|> \xc3\xa9\xe2\x82\xac");
    for (int id = 0; id < tokenizer->vocab_size() && id < 64; ++id) ids.push_back(id);
    tokenizer->decode(ids);
  } catch (const kforge::sdk::Error&) {
    // A refused file is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
