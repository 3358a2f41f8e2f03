// A tiny vision tower config for tests that need an encoder but no reference weights.
#pragma once

#include "vit_config.h"

namespace kforge::test {

/// `tower`'s Hugging Face defaults shrunk: hidden 8, MLP 12, 2 layers of 2 heads, 8x8 images of 4x4
/// patches (4 patch tokens).
inline vision::VitConfig tiny_vit_config(vision::VitTower tower) {
  vision::VitConfig c = vision::VitConfig::defaults(tower);
  c.hidden_size = 8;
  c.intermediate_size = 12;
  c.num_hidden_layers = 2;
  c.num_attention_heads = 2;
  c.image_size = 8;
  c.patch_size = 4;
  return c;
}

}  // namespace kforge::test
