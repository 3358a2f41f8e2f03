// Image encoders for the tests (see image_fixtures.h).
#include "image_fixtures.h"

#include <jpeglib.h>
#include <webp/encode.h>
#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace kforge::test {
namespace {

void append_be32(std::string* out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>((v >> shift) & 0xFF));
}

void append_png_chunk(std::string* png, const char* type, const std::string& data) {
  append_be32(png, static_cast<uint32_t>(data.size()));
  const std::string body = std::string(type, 4) + data;
  png->append(body);
  append_be32(png, static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(body.data()), body.size())));
}

}  // namespace

image_text::RgbImage test_pattern(int64_t width, int64_t height, uint32_t seed) {
  image_text::RgbImage image{width, height, std::vector<uint8_t>(static_cast<size_t>(width * height * 3))};
  for (int64_t y = 0; y < height; ++y) {
    for (int64_t x = 0; x < width; ++x) {
      for (int64_t c = 0; c < 3; ++c) {
        const double ripple = 40.0 * std::sin(0.31 * x * (c + 1) + 0.17 * y + seed * 0.7);
        const double value = 255.0 * (c == 0 ? x : c == 1 ? y : x + y) / (width + height) + 60 + ripple;
        image.pixels[(y * width + x) * 3 + c] = static_cast<uint8_t>(std::clamp(value, 0.0, 255.0));
      }
    }
  }
  return image;
}

std::string encode_jpeg(const image_text::RgbImage& image, int quality) {
  jpeg_compress_struct info;
  jpeg_error_mgr error;
  info.err = jpeg_std_error(&error);
  jpeg_create_compress(&info);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&info, &buffer, &size);
  info.image_width = static_cast<JDIMENSION>(image.width);
  info.image_height = static_cast<JDIMENSION>(image.height);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, quality, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row =
        const_cast<uint8_t*>(image.pixels.data()) + static_cast<size_t>(info.next_scanline) * image.width * 3;
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  jpeg_destroy_compress(&info);
  std::string jpeg(reinterpret_cast<char*>(buffer), size);
  std::free(buffer);
  return jpeg;
}

std::string encode_webp_lossless(const image_text::RgbImage& image) {
  uint8_t* output = nullptr;
  const size_t size = WebPEncodeLosslessRGB(image.pixels.data(), static_cast<int>(image.width),
                                            static_cast<int>(image.height), static_cast<int>(image.width * 3), &output);
  if (size == 0) throw std::runtime_error("WebPEncodeLosslessRGB failed");
  std::string webp(reinterpret_cast<char*>(output), size);
  WebPFree(output);
  return webp;
}

std::string encode_png_by_hand(int64_t width, int64_t height, int channels, const std::vector<uint8_t>& samples) {
  std::string raw;
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back('\0');  // filter type 0 (none)
    raw.append(reinterpret_cast<const char*>(samples.data()) + y * width * channels, width * channels);
  }
  uLongf packed_size = compressBound(raw.size());
  std::string packed(packed_size, '\0');
  compress(reinterpret_cast<Bytef*>(packed.data()), &packed_size, reinterpret_cast<const Bytef*>(raw.data()),
           raw.size());
  packed.resize(packed_size);
  std::string header;
  append_be32(&header, static_cast<uint32_t>(width));
  append_be32(&header, static_cast<uint32_t>(height));
  const char colour_type = channels == 1 ? 0 : channels == 3 ? 2 : 6;
  header += std::string{8, colour_type, 0, 0, 0};  // bit depth, colour type, compression, filter, interlace
  std::string png = "\x89PNG\r\n\x1A\n";
  append_png_chunk(&png, "IHDR", header);
  append_png_chunk(&png, "IDAT", packed);
  append_png_chunk(&png, "IEND", "");
  return png;
}

image_text::Tokenize byte_tokenizer() {
  return [](std::string_view text) {
    std::vector<int64_t> ids;
    for (const char c : text) ids.push_back(static_cast<uint8_t>(c));
    return ids;
  };
}

}  // namespace kforge::test
