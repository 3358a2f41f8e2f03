// Fuzz target: an image-text JSON Lines manifest (plugins/common/image_text_io/jsonl_manifest) as the dataset reads
// it; the input is the whole manifest. The images it names are not read: the target is the manifest's parser.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "image_text_io/jsonl_manifest.h"
#include "kforge/sdk/error.h"
#include "scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path file = kforge::fuzz::scratch_dir() / "manifest.jsonl";
  kforge::fuzz::write_bytes(file, data, size);
  try {
    const kforge::image_text::JsonlManifestSource source(file, int64_t{1} << 20);
    source.size();
  } catch (const kforge::sdk::Error&) {
    // A refused manifest is the documented outcome; any other exception escapes as a finding.
  }
  return 0;
}
