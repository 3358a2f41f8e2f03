// The built-in image-text dataset plugin: registers ImageTextData (kind image_text_dataset, name image_text), built
// from the host's ImageTextSpec and the [vlm] key it reads (max_image_bytes).
#include <kforge/sdk/plugin.h>

#include "image_text/image_text_data.h"

namespace {

using kforge::sdk::reads;

constexpr kforge_config_key kImageTextKeys[] = {reads("max_image_bytes")};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::image_text_dataset, "image_text", "1.0.0",
                     "WebDataset tar shards or a JSONL manifest, decoded on [data] num_workers threads",
                     kforge::sdk::config_keys(kImageTextKeys)),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_image_text_dataset(
      "image_text",
      [](const kforge::sdk::BuildContext& ctx,
         const kforge::sdk::ImageTextSpec& spec) -> std::unique_ptr<kforge::sdk::ImageTextDataset> {
        return std::make_unique<kforge::image_text::ImageTextData>(spec, ctx.section.get_int("max_image_bytes"));
      });
}

}  // namespace

KFORGE_PLUGIN("kforge-image-text", "1.0.0", "Built-in image-text datasets", kComponents, register_all)
