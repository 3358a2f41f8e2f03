// Decode, resize and normalise the image, encode the text.
#include "image_text_io/sample_preprocess.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

namespace kforge::image_text {

Sample preprocess_sample(const RawSample& raw, const PreprocessOptions& options) {
  const std::string what = fmt::format("'{}' sample '{}'", raw.origin, raw.key);
  const RgbImage image = decode_image(raw.image, what);
  Sample sample;
  sample.origin = raw.origin;
  sample.key = raw.key;
  sample.pixel_values = to_pixel_values(image, options.image_height, options.image_width, options.normalization);
  EncodedText text = encode_text(options.tokenize, raw.prompt, raw.caption, options.text);
  sample.input_ids = at::tensor(text.input_ids, at::kLong);
  sample.labels = at::tensor(text.labels, at::kLong);
  sample.loss_tokens = text.loss_tokens;
  return sample;
}

}  // namespace kforge::image_text
