// read_image: a sample-less image-text dataset built from the checkpoint's config, asked for one image's pixels.
#include "generate/image_input.h"

#include "plugins/components.h"

namespace kforge::generate {

at::Tensor read_image(const CheckpointModel& checkpoint, const plugins::Registry& registry, const std::string& file) {
  sdk::ImageTextSpec spec;  // no dataset_path: no samples, so no text is ever tokenised
  spec.image_size = checkpoint.pixels.image_size;
  spec.pixels = checkpoint.pixels;
  spec.max_text_len = checkpoint.job.view("vlm").get_int("max_text_len");
  spec.tokenize = [](std::string_view) { return std::vector<int64_t>{}; };
  return plugins::Components(registry, checkpoint.job).image_text_dataset(spec)->pixel_values(file);
}

}  // namespace kforge::generate
