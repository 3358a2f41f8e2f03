// Reading a JSONL image-text manifest once, and each sample's image file on demand.
#include "image_text_io/jsonl_manifest.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "image_text_io/regular_file.h"
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

JsonlManifestSource::JsonlManifestSource(const std::filesystem::path& manifest, int64_t max_image_bytes)
    : manifest_(manifest), max_image_bytes_(max_image_bytes) {
  if (max_image_bytes <= 0) {
    throw sdk::ConfigError(fmt::format("[vlm] max_image_bytes = {} must be > 0", max_image_bytes));
  }
  std::ifstream in(manifest);
  if (!in) throw sdk::Error(fmt::format("cannot open the image-text manifest '{}'", manifest.string()));
  std::string text;
  for (int64_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    lines_.push_back(parse_manifest_line(text, manifest.string(), line));
    try {
      images_.push_back(resolve_manifest_path(manifest.parent_path(), lines_.back().image));
    } catch (const sdk::Error& e) {
      throw sdk::Error(fmt::format("{}:{}: {}", manifest.string(), line, e.what()));
    }
  }
  if (lines_.empty()) throw sdk::Error(fmt::format("the image-text manifest '{}' holds no sample", manifest.string()));
}

RawSample JsonlManifestSource::load(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(
        fmt::format("manifest '{}': sample {} out of range (0 to {})", manifest_.string(), index, size() - 1));
  }
  const ManifestLine& l = lines_[index];
  std::string bytes = read_data_file(images_[index].string(), max_image_bytes_, "[vlm] max_image_bytes",
                                     fmt::format("manifest '{}' line {}: the image", manifest_.string(), l.line));
  return RawSample{manifest_.string(), fmt::format("line {} ({})", l.line, l.image), std::move(bytes), l.text,
                   l.prompt};
}

}  // namespace kforge::image_text
