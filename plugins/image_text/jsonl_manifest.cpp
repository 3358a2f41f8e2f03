// Reading a JSONL image-text manifest once, and each sample's image file on demand.
#include "image_text/jsonl_manifest.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "image_text/sample_error.h"
#include "kforge/sdk/error.h"

namespace kforge::image_text {

ManifestLine parse_manifest_line(std::string_view json, const std::string& file, int64_t line) {
  const nlohmann::json object = nlohmann::json::parse(json, nullptr, false);
  if (!object.is_object()) {
    throw sdk::Error(
        fmt::format("{}:{}: not a JSON object (expected {{\"image\": \"path\", \"text\": \"...\", "
                    "\"prompt\": \"...\"}})",
                    file, line));
  }
  ManifestLine parsed{line, {}, {}, {}};
  for (auto [field, target, required] :
       {std::tuple{"image", &parsed.image, true}, std::tuple{"text", &parsed.text, true},
        std::tuple{"prompt", &parsed.prompt, false}}) {
    const auto it = object.find(field);
    if (it == object.end() && !required) continue;
    if (it == object.end() || !it->is_string()) {
      throw sdk::Error(fmt::format("{}:{}: \"{}\" must be a string{}", file, line, field,
                                   it == object.end() ? " and is missing" : fmt::format(", not {}", it->dump())));
    }
    *target = it->get<std::string>();
  }
  if (parsed.image.empty()) throw sdk::Error(fmt::format("{}:{}: \"image\" is an empty path", file, line));
  return parsed;
}

JsonlManifestSource::JsonlManifestSource(const std::filesystem::path& manifest) : manifest_(manifest) {
  std::ifstream in(manifest);
  if (!in) throw sdk::Error(fmt::format("cannot open the image-text manifest '{}'", manifest.string()));
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines_.push_back(parse_manifest_line(text, manifest.string(), line));
  }
  if (lines_.empty()) throw sdk::Error(fmt::format("the image-text manifest '{}' holds no sample", manifest.string()));
}

RawSample JsonlManifestSource::load(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(
        fmt::format("manifest '{}': sample {} out of range (0 to {})", manifest_.string(), index, size() - 1));
  }
  const ManifestLine& l = lines_[index];
  const std::filesystem::path image = manifest_.parent_path() / l.image;
  std::ifstream in(image, std::ios::binary);
  std::ostringstream bytes;
  if (!in || !(bytes << in.rdbuf())) {
    throw SampleError(
        fmt::format("manifest '{}' line {}: cannot read the image '{}'", manifest_.string(), l.line, image.string()));
  }
  return RawSample{manifest_.string(), fmt::format("line {} ({})", l.line, l.image), std::move(bytes).str(), l.text,
                   l.prompt};
}

}  // namespace kforge::image_text
