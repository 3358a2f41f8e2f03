// Decoding an encoded image (JPEG by libjpeg-turbo, PNG by libpng, WebP by libwebp; told by content, not by
// name) into 8-bit RGB: grey is replicated, alpha is dropped (as PIL's convert("RGB")), 16-bit PNG is reduced
// to 8 bits by libpng's simplified API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::image_text {

struct RgbImage {
  int64_t width = 0;
  int64_t height = 0;
  std::vector<uint8_t> pixels;  ///< row-major, height x width x 3
};

/// Images above this many pixels are refused (a decompression bomb, not a photo).
inline constexpr int64_t kMaxImagePixels = int64_t{1} << 28;

/// The default cap on one image file's bytes ([vlm] max_image_bytes): far above a photograph's (LLaVA's and WebDataset
/// images are well under 1 MiB; a lossless 8K PNG is about 100 MiB raw and compresses below it), far below what a
/// decode worker may hold; a file above it is not a training image.
inline constexpr int64_t kDefaultMaxImageBytes = int64_t{64} << 20;

/// Decodes `bytes`; `what` names the image in errors (shard and key, or file). Throws SampleError for
/// data that is not a JPEG, PNG or WebP image, or that its decoder rejects.
RgbImage decode_image(std::string_view bytes, const std::string& what);

}  // namespace kforge::image_text
