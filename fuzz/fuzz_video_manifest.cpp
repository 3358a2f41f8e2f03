// Fuzz target: a video JSON Lines manifest (plugins/video/video_manifest) as the video_jsonl dataset reads it, each
// clip it lists; the input is the whole manifest.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "kforge/sdk/error.h"
#include "scratch_file.h"
#include "video/video_manifest.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = kforge::fuzz::scratch_dir() / "clips.jsonl";
  kforge::fuzz::write_bytes(file, data, size);
  try {
    const kforge::video::VideoManifestSource source(file.string(), "the [video] prompt", 0);
    for (int64_t i = 0; i < source.size(); ++i) source.clip(i);
    source.describe();
  } catch (const kforge::sdk::Error&) {
    // A refused manifest (ConfigError) is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
