// find_prepared_vocab: reads prepare-data's metadata.json (vocab_size, shard list) next to the shards.
#include "prepared_vocab.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace kforge::builtin::data {

namespace fs = std::filesystem;

std::string normalised_shard_path(const std::string& path) {
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  return (ec ? fs::path(path) : abs).lexically_normal().string();
}

std::optional<PreparedVocab> find_prepared_vocab(const std::string& dir, sdk::Logger* log) {
  fs::path here = fs::path(normalised_shard_path(dir));
  if (!here.has_filename()) here = here.parent_path();  // "out/train/" names out/train
  for (const fs::path& base : {here, here.parent_path()}) {
    const fs::path file = base / "metadata.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) continue;
    try {
      const nlohmann::json meta = nlohmann::json::parse(std::ifstream(file));
      if (meta.value("format", "") != "kforge-tokens-v1") continue;
      PreparedVocab v;
      v.vocab_size = meta.at("vocab_size").get<int64_t>();
      v.metadata = file.string();
      for (const char* split : {"train", "eval"}) {
        for (const auto& rel : meta.at("shards").at(split))
          v.shards.insert((base / rel.get<std::string>()).lexically_normal().string());
      }
      return v;
    } catch (const std::exception& e) {
      if (log != nullptr) {
        log->warn(
            fmt::format("{}: cannot read it as prepare-data's metadata ({}); the shards' token ids are not "
                        "checked against its vocab_size",
                        file.string(), e.what()));
      }
    }
  }
  return std::nullopt;
}

}  // namespace kforge::builtin::data
