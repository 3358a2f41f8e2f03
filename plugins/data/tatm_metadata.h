// The token width and vocabulary that tatm's metadata.yaml records for the .bin shards it wrote.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kforge::builtin::data {

/// tatm's tokenized_info, as `tatm tokenize` writes it beside its shards (tatm.tokenizer.metadata.write_metadata).
struct TatmMetadata {
  std::string file;                   ///< the metadata.yaml (or .yml) read
  std::optional<std::string> dtype;   ///< tokenized_info.dtype ("uint16", "uint32")
  std::optional<int64_t> vocab_size;  ///< tokenized_info.vocab_size
};

/// The metadata.yaml (else metadata.yml) in `dir`, read with libyaml; nullopt when there is none. A file without
/// tokenized_info gives neither field. Throws sdk::ConfigError naming the file (and line) when it is not YAML, its
/// top level or tokenized_info is not a mapping, or vocab_size is not a positive integer.
std::optional<TatmMetadata> find_tatm_metadata(const std::filesystem::path& dir);

}  // namespace kforge::builtin::data
