// Test images made here: a deterministic RGB pattern, encoded as JPEG (libjpeg), WebP (libwebp, lossless) and
// PNG written by hand (zlib and CRC-32 only, so libpng, which decodes it, did not also write it); byte tokens.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "image_text_io/image_decode.h"
#include "image_text_io/text_encoding.h"

namespace kforge::test {

/// Smooth gradients plus a seeded ripple: photo-like enough for JPEG, different for every seed.
image_text::RgbImage test_pattern(int64_t width, int64_t height, uint32_t seed);

std::string encode_jpeg(const image_text::RgbImage& image, int quality);
std::string encode_webp_lossless(const image_text::RgbImage& image);

/// A PNG of `channels` (1 grey, 3 RGB, 4 RGBA) 8-bit samples per pixel, filter 0 on every row.
std::string encode_png_by_hand(int64_t width, int64_t height, int channels, const std::vector<uint8_t>& samples);

/// One token per byte of the text (its value): a thread-safe stand-in for a real tokenizer.
image_text::Tokenize byte_tokenizer();

}  // namespace kforge::test
