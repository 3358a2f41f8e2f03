// A tiny Hugging Face vision tower directory (config.json only) for tests of the vision plugin and the VLM.
#pragma once

#include <string>

namespace kforge::test {

/// A fresh directory whose config.json describes a siglip2/clip tower for 8x8 images of 4x4 patches: 4 tokens of 8
/// features, one layer of 2 heads. It holds no weights, so a tower built from it keeps its random initialisation.
std::string tiny_tower_dir();

}  // namespace kforge::test
