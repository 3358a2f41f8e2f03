// Reading a JSONL video manifest once into clips (relative paths resolved under the manifest's directory).
#include "video/video_manifest.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "image_text_io/regular_file.h"
#include "kforge/sdk/error.h"

namespace kforge::video {
namespace {

namespace fs = std::filesystem;

constexpr const char* kLineFormat = R"({"video": "clip.mp4", "text": "caption", "prompt": "optional"})";

[[noreturn]] void refuse_manifest(const std::string& key, const std::string& manifest, const std::string& what) {
  throw sdk::ConfigError(fmt::format("{} = \"{}\": {}", key, manifest, what));
}

// The string member `field` of a manifest line; "" when it is optional and absent.
std::string string_member(const nlohmann::json& object, const char* field, bool required, const std::string& where) {
  const auto it = object.find(field);
  if (it == object.end() && !required) return {};
  if (it == object.end() || !it->is_string()) {
    throw sdk::Error(fmt::format("{}: \"{}\" must be a string{}", where, field,
                                 it == object.end() ? " and is missing" : fmt::format(", not {}", it->dump())));
  }
  return it->get<std::string>();
}

}  // namespace

VideoManifestSource::VideoManifestSource(const std::string& manifest, const std::string& prompt, int64_t max_samples,
                                         const std::string& root_key)
    : manifest_(manifest) {
  if (max_samples < 0) {
    throw sdk::ConfigError(fmt::format("[video] max_samples = {} must be >= 0 (0: all)", max_samples));
  }
  std::error_code ec;
  if (manifest.empty() || !fs::is_regular_file(manifest, ec) || fs::path(manifest).extension() != ".jsonl") {
    refuse_manifest(root_key, manifest,
                    fmt::format("expected a JSON Lines manifest (a .jsonl file), one {} per line", kLineFormat));
  }
  std::ifstream in(manifest);
  if (!in) refuse_manifest(root_key, manifest, "cannot open the manifest");
  const fs::path dir = fs::path(manifest).parent_path();
  std::string text;
  for (int64_t line = 1; (max_samples == 0 || size() < max_samples) && std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = fmt::format("{}:{}", manifest, line);
    const nlohmann::json object = nlohmann::json::parse(text, nullptr, false);
    try {
      if (!object.is_object()) throw sdk::Error(fmt::format("{}: not a JSON object (expected {})", where, kLineFormat));
      const std::string video = string_member(object, "video", true, where);
      if (video.empty()) throw sdk::Error(where + ": \"video\" is an empty path");
      std::string caption = string_member(object, "text", true, where);
      std::string own_prompt = string_member(object, "prompt", false, where);
      std::string path;
      try {
        path = image_text::resolve_manifest_path(dir, video).string();
      } catch (const sdk::Error& e) {
        throw sdk::Error(fmt::format("{}: {}", where, e.what()));
      }
      clips_.push_back(Clip{std::move(path), std::move(caption),
                            object.contains("prompt") ? std::move(own_prompt) : prompt,
                            fmt::format("{} line {}", manifest, line)});
    } catch (const sdk::Error& e) {
      refuse_manifest(root_key, manifest, e.what());
    }
  }
  if (in.bad()) refuse_manifest(root_key, manifest, "cannot read the manifest");
  if (clips_.empty()) refuse_manifest(root_key, manifest, "the manifest holds no clip");
}

Clip VideoManifestSource::clip(int64_t index) const {
  if (index < 0 || index >= size()) {
    throw sdk::Error(fmt::format("video manifest '{}': clip {} out of range (0 to {})", manifest_, index, size() - 1));
  }
  return clips_[static_cast<size_t>(index)];
}

std::string VideoManifestSource::describe() const {
  return fmt::format("video JSONL manifest {}: {} clip{}", manifest_, size(), size() == 1 ? "" : "s");
}

}  // namespace kforge::video
