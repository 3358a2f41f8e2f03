// One raw sample to model inputs: the decoded, resized and normalised image and the encoded text.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

#include "image_text_io/image_text_source.h"
#include "image_text_io/image_transform.h"
#include "image_text_io/text_encoding.h"

namespace kforge::image_text {

struct PreprocessOptions {
  int64_t image_height = 0;
  int64_t image_width = 0;
  Normalization normalization = siglip_normalization();
  TextOptions text;
  Tokenize tokenize;
};

struct Sample {
  int64_t position = 0;  ///< place in the sampler's order (resume after the last one taken)
  int64_t index = 0;     ///< the source's sample index
  std::string origin;
  std::string key;
  at::Tensor pixel_values;  ///< float32 [3, image_height, image_width]
  at::Tensor input_ids;     ///< int64 [max_text_len]
  at::Tensor labels;        ///< int64 [max_text_len], kIgnoreLabel where there is no loss
  int64_t loss_tokens = 0;
};

/// Throws SampleError (naming origin and key) when the image cannot be decoded.
Sample preprocess_sample(const RawSample& raw, const PreprocessOptions& options);

}  // namespace kforge::image_text
