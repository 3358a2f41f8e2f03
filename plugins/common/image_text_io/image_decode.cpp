// JPEG through libjpeg-turbo's libjpeg API (errors longjmp out of its error handler), PNG through libpng's
// simplified API, WebP through libwebp; the format is recognised by its signature.
#include "image_text_io/image_decode.h"

#include <fmt/format.h>
#include <jpeglib.h>
#include <png.h>
#include <webp/decode.h>

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <vector>

#include "image_text_io/sample_error.h"

namespace kforge::image_text {
namespace {

void check_image_size(int64_t width, int64_t height, const std::string& what, const char* format) {
  if (width <= 0 || height <= 0 || width * height > kMaxImagePixels) {
    throw SampleError(fmt::format("{}: {} image of {}x{} pixels (allowed: 1 to {} pixels)", what, format, width, height,
                                  kMaxImagePixels));
  }
}

struct JpegErrorJump {
  jpeg_error_mgr manager;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void jpeg_error_exit_to_jump(j_common_ptr info) {
  auto* error = reinterpret_cast<JpegErrorJump*>(info->err);
  (*info->err->format_message)(info, error->message);
  std::longjmp(error->jump, 1);
}

// Warnings (corrupt data libjpeg can recover from, such as a premature end) are errors here: the pixels
// are not the image's.
void jpeg_warning_to_error(j_common_ptr info, int level) {
  if (level < 0) jpeg_error_exit_to_jump(info);
}

// No C++ object with a destructor may live in this function: longjmp skips destructors.
bool decode_jpeg_into(std::string_view bytes, RgbImage* image, JpegErrorJump* error, int64_t* width, int64_t* height) {
  jpeg_decompress_struct info;
  info.err = jpeg_std_error(&error->manager);
  error->manager.error_exit = jpeg_error_exit_to_jump;
  error->manager.emit_message = jpeg_warning_to_error;
  if (setjmp(error->jump)) {
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  info.out_color_space = JCS_RGB;
  jpeg_start_decompress(&info);
  *width = info.output_width;
  *height = info.output_height;
  if (*width <= 0 || *height <= 0 || *width * *height > kMaxImagePixels) {
    jpeg_destroy_decompress(&info);
    return true;  // the caller refuses the size
  }
  image->pixels.resize(static_cast<size_t>(*width * *height * 3));
  while (info.output_scanline < info.output_height) {
    JSAMPROW row = image->pixels.data() + static_cast<size_t>(info.output_scanline) * *width * 3;
    jpeg_read_scanlines(&info, &row, 1);
  }
  jpeg_finish_decompress(&info);
  jpeg_destroy_decompress(&info);
  return true;
}

RgbImage decode_jpeg(std::string_view bytes, const std::string& what) {
  RgbImage image;
  JpegErrorJump error{};
  int64_t width = 0;
  int64_t height = 0;
  if (!decode_jpeg_into(bytes, &image, &error, &width, &height)) {
    throw SampleError(fmt::format("{}: corrupt JPEG: {}", what, error.message));
  }
  check_image_size(width, height, what, "JPEG");
  image.width = width;
  image.height = height;
  return image;
}

RgbImage decode_png(std::string_view bytes, const std::string& what) {
  png_image png;
  std::memset(&png, 0, sizeof png);
  png.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_memory(&png, bytes.data(), bytes.size())) {
    throw SampleError(fmt::format("{}: corrupt PNG: {}", what, png.message));
  }
  check_image_size(png.width, png.height, what, "PNG");
  // RGBA then dropping alpha keeps the colour values (RGB output would composite them onto a background).
  png.format = PNG_FORMAT_RGBA;
  std::vector<uint8_t> rgba(PNG_IMAGE_SIZE(png));
  if (!png_image_finish_read(&png, nullptr, rgba.data(), 0, nullptr)) {
    const std::string message = png.message;
    png_image_free(&png);
    throw SampleError(fmt::format("{}: corrupt PNG: {}", what, message));
  }
  RgbImage image{static_cast<int64_t>(png.width), static_cast<int64_t>(png.height),
                 std::vector<uint8_t>(static_cast<size_t>(png.width) * png.height * 3)};
  for (size_t p = 0, n = static_cast<size_t>(png.width) * png.height; p < n; ++p) {
    std::memcpy(&image.pixels[p * 3], &rgba[p * 4], 3);
  }
  return image;
}

RgbImage decode_webp(std::string_view bytes, const std::string& what) {
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  int width = 0;
  int height = 0;
  if (!WebPGetInfo(data, bytes.size(), &width, &height)) throw SampleError(fmt::format("{}: corrupt WebP", what));
  check_image_size(width, height, what, "WebP");
  RgbImage image{width, height, std::vector<uint8_t>(static_cast<size_t>(width) * height * 3)};
  if (!WebPDecodeRGBInto(data, bytes.size(), image.pixels.data(), image.pixels.size(), width * 3)) {
    throw SampleError(fmt::format("{}: corrupt WebP (its header says {}x{})", what, width, height));
  }
  return image;
}

bool starts_with(std::string_view bytes, std::string_view prefix) { return bytes.substr(0, prefix.size()) == prefix; }

}  // namespace

RgbImage decode_image(std::string_view bytes, const std::string& what) {
  if (starts_with(bytes, "\xFF\xD8\xFF")) return decode_jpeg(bytes, what);
  if (starts_with(bytes, "\x89PNG\r\n\x1A\n")) return decode_png(bytes, what);
  if (bytes.size() >= 12 && starts_with(bytes, "RIFF") && bytes.substr(8, 4) == "WEBP") return decode_webp(bytes, what);
  // The file's bytes are never shown: the path may name a file that is not an image at all.
  throw SampleError(fmt::format("{}: {} bytes that are not a JPEG, PNG or WebP image", what, bytes.size()));
}

}  // namespace kforge::image_text
