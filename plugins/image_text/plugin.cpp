// The built-in image-text dataset plugin: registers ImageTextData (kind image_text_dataset, name image_text), built
// from the host's ImageTextSpec; it declares no config keys of its own.
#include <kforge/sdk/plugin.h>

#include "image_text/image_text_dataset.h"

namespace {

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::image_text_dataset, "image_text", "1.0.0",
                     "WebDataset tar shards or a JSONL manifest, decoded on [data] num_workers threads"),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_image_text_dataset(
      "image_text",
      [](const kforge::sdk::BuildContext&,
         const kforge::sdk::ImageTextSpec& spec) -> std::unique_ptr<kforge::sdk::ImageTextDataset> {
        return std::make_unique<kforge::image_text::ImageTextData>(spec);
      });
}

}  // namespace

KFORGE_PLUGIN("kforge-image-text", "1.0.0", "Built-in image-text datasets", kComponents, register_all)
