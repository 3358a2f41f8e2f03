// Decoding against independent references: PNGs written by hand (exact), JPEG against libjpeg-turbo's own djpeg
// (within 1 per channel), lossless WebP (exact); corrupt and foreign data are SampleErrors naming the image.
#include "image_text_io/image_decode.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "image_fixtures.h"
#include "image_text_io/sample_error.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using image_text::decode_image;
using image_text::RgbImage;
using image_text::SampleError;

// A binary PPM (P6, maxval 255), as djpeg -ppm writes it.
RgbImage read_ppm(const std::string& bytes) {
  std::istringstream in(bytes);
  std::string magic;
  int64_t width = 0, height = 0, maxval = 0;
  in >> magic >> width >> height >> maxval;
  in.get();
  EXPECT_EQ(magic, "P6");
  EXPECT_EQ(maxval, 255);
  RgbImage image{width, height, std::vector<uint8_t>(static_cast<size_t>(width * height * 3))};
  in.read(reinterpret_cast<char*>(image.pixels.data()), static_cast<std::streamsize>(image.pixels.size()));
  return image;
}

TEST(ImageDecode, PngRgbGreyAndAlphaMatchTheHandWrittenPixels) {
  const RgbImage rgb = test_pattern(13, 7, 1);
  EXPECT_EQ(decode_image(encode_png_by_hand(13, 7, 3, rgb.pixels), "rgb.png").pixels, rgb.pixels);

  std::vector<uint8_t> grey(5 * 4);
  for (size_t i = 0; i < grey.size(); ++i) grey[i] = static_cast<uint8_t>(i * 13);
  const RgbImage from_grey = decode_image(encode_png_by_hand(5, 4, 1, grey), "grey.png");
  ASSERT_EQ(from_grey.width, 5);
  ASSERT_EQ(from_grey.height, 4);
  for (size_t i = 0; i < grey.size(); ++i) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(from_grey.pixels[i * 3 + c], grey[i]) << "pixel " << i;
  }

  // Alpha is dropped, not composited: a transparent pixel keeps its colour (as PIL's convert("RGB")).
  std::vector<uint8_t> rgba;
  for (size_t p = 0; p < rgb.pixels.size() / 3; ++p) {
    rgba.insert(rgba.end(),
                {rgb.pixels[p * 3], rgb.pixels[p * 3 + 1], rgb.pixels[p * 3 + 2], static_cast<uint8_t>(p * 5)});
  }
  EXPECT_EQ(decode_image(encode_png_by_hand(13, 7, 4, rgba), "rgba.png").pixels, rgb.pixels);
}

// libjpeg-turbo's djpeg decodes with the same IDCT and upsampling defaults; JPEG decoders that differ in them
// may differ by 1 per channel (rounding in the IDCT and the colour conversion), the bound asserted here.
TEST(ImageDecode, JpegMatchesDjpegWithinOneLevel) {
  ASSERT_EQ(run_command("command -v djpeg"), 0)
      << "djpeg (Debian libjpeg-turbo-progs) is missing: run scripts/setup.sh";
  const auto dir = temp_dir("jpeg_djpeg");
  for (const auto& [width, height, quality] : {std::tuple{64, 48, 90}, std::tuple{37, 23, 75}}) {
    const std::string jpeg = encode_jpeg(test_pattern(width, height, 3), quality);
    const auto path = dir / "image.jpg";
    std::ofstream(path, std::ios::binary) << jpeg;
    ASSERT_EQ(run_command("djpeg -ppm -outfile '" + (dir / "image.ppm").string() + "' '" + path.string() + "'"), 0);
    const RgbImage reference = read_ppm(read_file(dir / "image.ppm"));
    const RgbImage decoded = decode_image(jpeg, "image.jpg");
    ASSERT_EQ(decoded.width, reference.width);
    ASSERT_EQ(decoded.height, reference.height);
    int max_difference = 0;
    for (size_t i = 0; i < decoded.pixels.size(); ++i) {
      max_difference = std::max(max_difference, std::abs(int{decoded.pixels[i]} - int{reference.pixels[i]}));
    }
    EXPECT_LE(max_difference, 1) << width << "x" << height << " q" << quality;
  }
}

TEST(ImageDecode, LosslessWebpGivesBackItsPixels) {
  const RgbImage image = test_pattern(19, 11, 5);
  const RgbImage decoded = decode_image(encode_webp_lossless(image), "image.webp");
  EXPECT_EQ(decoded.width, 19);
  EXPECT_EQ(decoded.height, 11);
  EXPECT_EQ(decoded.pixels, image.pixels);
}

TEST(ImageDecode, CorruptOrForeignDataIsASampleErrorNamingTheImage) {
  const std::string jpeg = encode_jpeg(test_pattern(32, 32, 2), 90);
  const auto message_of = [](const std::string& bytes) {
    try {
      decode_image(bytes, "shard-000.tar sample 'x'");
    } catch (const SampleError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(message_of(jpeg.substr(0, jpeg.size() / 2)).find("shard-000.tar sample 'x': corrupt JPEG"),
            std::string::npos);
  std::string bad_header = jpeg;
  const size_t frame = bad_header.find("\xFF\xC0");  // SOF0: length, precision, then height and width
  ASSERT_NE(frame, std::string::npos);
  bad_header.replace(frame + 5, 2, std::string(2, '\0'));  // a height of 0
  EXPECT_NE(message_of(bad_header).find("corrupt JPEG"), std::string::npos) << message_of(bad_header);
  const std::string png = encode_png_by_hand(4, 4, 3, test_pattern(4, 4, 1).pixels);
  EXPECT_NE(message_of(png.substr(0, png.size() - 20)).find("corrupt PNG"), std::string::npos);
  // The size, never the bytes: a path that names a secret must not print it.
  const std::string secret = message_of("root:x:0:0:root:/root:/bin/bash\n");
  EXPECT_NE(secret.find("32 bytes that are not a JPEG, PNG or WebP image"), std::string::npos) << secret;
  EXPECT_EQ(secret.find("root"), std::string::npos) << secret;
  EXPECT_EQ(secret.find("72 6f 6f 74"), std::string::npos) << secret;
  EXPECT_NE(message_of("").find("0 bytes that are not"), std::string::npos);
}

}  // namespace
}  // namespace kforge::test
