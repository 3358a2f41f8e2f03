// read_image: an image file prepared for a vision-language checkpoint, by the image-text dataset plugin its config
// names, exactly as its training images were.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "generate/checkpoint_model.h"
#include "plugins/registry.h"

namespace kforge::generate {

/// `file` decoded, resized to the encoder's size and normalised with its statistics by the checkpoint's [vlm] dataset
/// plugin: float32 [3, H, W]. Throws sdk::Error naming the file when it cannot be read or decoded.
at::Tensor read_image(const CheckpointModel& checkpoint, const plugins::Registry& registry, const std::string& file);

}  // namespace kforge::generate
