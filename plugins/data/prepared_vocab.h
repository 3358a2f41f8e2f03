// The vocabulary size `kforge prepare-data` recorded in metadata.json for the shards it wrote.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "kforge/sdk/logger.h"

namespace kforge::builtin::data {

struct PreparedVocab {
  int64_t vocab_size = 0;
  std::string metadata;          ///< the metadata.json it comes from
  std::set<std::string> shards;  ///< absolute, normalised paths of the shards that file lists
};

/// The metadata.json (format "kforge-tokens-v1") in shard directory `dir` or in its parent, where
/// prepare-data writes it (OUTPUT/metadata.json; shards in OUTPUT/train and OUTPUT/eval); nullopt when
/// there is none. One that cannot be read is reported on `log` (when given) and ignored.
std::optional<PreparedVocab> find_prepared_vocab(const std::string& dir, sdk::Logger* log);

/// `path` as PreparedVocab::shards spells it.
std::string normalised_shard_path(const std::string& path);

}  // namespace kforge::builtin::data
