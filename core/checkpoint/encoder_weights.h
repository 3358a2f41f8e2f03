// Encoder weights: a vision encoder's pretrained tensors, read from the local Hugging Face directory of
// [vision_encoder] path.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "kforge/sdk/vision_encoder.h"

namespace kforge::checkpoint {

/// What load_encoder_weights read.
struct EncoderWeights {
  std::vector<std::filesystem::path> files;  ///< the safetensors files read
  size_t loaded = 0;                         ///< tensors handed to the encoder
  std::vector<std::string> unused;           ///< the files' other tensors (e.g. a text tower), sorted, never read
};

/// Reads `dir`'s model.safetensors, or the shards its model.safetensors.index.json maps, taking only the tensors named
/// like one of the encoder's parameters or buffers (memory-mapped; the rest of the file is never read), and hands them
/// to encoder.load_hf_weights, which refuses a missing tensor or another shape. Throws sdk::ConfigError naming
/// [vision_encoder] path when `dir` is not a local directory (kforge has no hub access: the message says how to fetch
/// one) or holds no safetensors weights.
EncoderWeights load_encoder_weights(sdk::VisionEncoder& encoder, const std::filesystem::path& dir);

}  // namespace kforge::checkpoint
