// A JSON object file of a Hugging Face model directory, read with errors naming the file.
#include "interop/json_file.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::interop {

nlohmann::json read_json_object(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw sdk::ConfigError(fmt::format("{}: cannot be read", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text.str());
  } catch (const nlohmann::json::exception& e) {
    throw sdk::ConfigError(fmt::format("{}: not valid JSON ({})", path.string(), e.what()));
  }
  if (!j.is_object()) throw sdk::ConfigError(fmt::format("{}: not a JSON object", path.string()));
  return j;
}

}  // namespace kforge::interop
