// tiny_tower_dir: writes the config.json of a tiny vision tower.
#include "support/tiny_tower.h"

#include <fstream>

#include "support/test_host.h"

namespace kforge::test {

std::string tiny_tower_dir() {
  const auto dir = temp_dir("tiny_tower");
  std::ofstream(dir / "config.json") << R"({"hidden_size": 8, "intermediate_size": 12, "num_hidden_layers": 1,
                                            "num_attention_heads": 2, "image_size": 8, "patch_size": 4})";
  return dir.string();
}

}  // namespace kforge::test
