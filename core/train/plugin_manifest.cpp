#include "train/plugin_manifest.h"

#include <fstream>
#include <iterator>
#include <set>

#include "checkpoint/checksum.h"
#include "kforge/sdk/kinds.h"

namespace kforge::train {

nlohmann::json plugin_manifest(const plugins::Registry& registry, bool hashes) {
  std::set<const plugins::PluginFile*> files;
  for (const sdk::KindInfo& kind : sdk::kKinds) {
    for (const plugins::Entry* e : registry.entries(kind.name)) files.insert(e->plugin);
  }
  nlohmann::json out = nlohmann::json::array();
  for (const plugins::PluginFile* f : files) {
    nlohmann::json entry = {{"file", f->path.filename().string()}, {"name", f->name}, {"version", f->version}};
    if (hashes) {
      std::ifstream in(f->path, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      entry["hash"] = checkpoint::checksum_hex(checkpoint::checksum(bytes.data(), bytes.size()));
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace kforge::train
