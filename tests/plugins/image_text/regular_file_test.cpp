// Data files: regular files only (a device, a FIFO, a directory refused unread, naming the path), a size cap naming
// its key, never the file's bytes in a message; manifest paths: absolute kept, relative ones under the manifest's
// directory, "..". out of it refused.
#include "image_text_io/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "image_text_io/sample_error.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;
using image_text::read_data_file;

std::string refusal_of(const std::string& path, int64_t max_bytes) {
  try {
    read_data_file(path, max_bytes, "[vlm] max_image_bytes", "manifest 'm.jsonl' line 3: the image");
  } catch (const image_text::SampleError& e) {
    return e.what();
  }
  return "(read)";
}

bool says(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(DataFile, ReadsARegularFileUpToTheCap) {
  const fs::path dir = temp_dir("data_file_read");
  std::ofstream(dir / "a.jpg", std::ios::binary) << std::string("\xff\xd8\xff\xe0 bytes", 10);
  EXPECT_EQ(read_data_file((dir / "a.jpg").string(), 10, "[vlm] max_image_bytes", "x"),
            std::string("\xff\xd8\xff\xe0 bytes", 10));
  const std::string over = refusal_of((dir / "a.jpg").string(), 9);
  EXPECT_TRUE(says(over, "manifest 'm.jsonl' line 3: the image: '" + (dir / "a.jpg").string() +
                            "' has 10 bytes, more than [vlm] max_image_bytes = 9"))
      << over;
}

TEST(DataFile, DevicesFifosDirectoriesAndMissingFilesAreRefusedUnreadNamingThePath) {
  const fs::path dir = temp_dir("data_file_refused");
  const std::string fifo = (dir / "pipe.jpg").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // A FIFO without a writer would block a read forever: refused at once.
  EXPECT_TRUE(says(refusal_of(fifo, 1 << 20), "'" + fifo + "' is a FIFO, not a regular file")) << refusal_of(fifo, 1);
  // /dev/zero would give 2 GiB of zeros to a reader that trusts it.
  EXPECT_TRUE(says(refusal_of("/dev/zero", 1 << 20), "'/dev/zero' is a device, not a regular file"));
  EXPECT_TRUE(says(refusal_of(dir.string(), 1 << 20), "is a directory, not a regular file"));
  EXPECT_TRUE(says(refusal_of((dir / "none.jpg").string(), 1 << 20), "No such file or directory"));
  EXPECT_EQ(image_text::data_file_refusal("/dev/zero", 1 << 20, "[video] max_clip_bytes"),
            "'/dev/zero' is a device, not a regular file; only regular files are read");
  EXPECT_EQ(image_text::data_file_refusal(fifo, 1 << 20, "[video] max_clip_bytes"),
            "'" + fifo + "' is a FIFO, not a regular file; only regular files are read");
}

TEST(DataFile, ManifestPathsStayUnderTheManifestsDirectoryUnlessAbsolute) {
  const fs::path dir = "/data/set";
  EXPECT_EQ(image_text::resolve_manifest_path(dir, "img/a.jpg"), fs::path("/data/set/img/a.jpg"));
  EXPECT_EQ(image_text::resolve_manifest_path(dir, "img/../b.jpg"), fs::path("/data/set/b.jpg"));
  EXPECT_EQ(image_text::resolve_manifest_path(dir, "/images/c.jpg"), fs::path("/images/c.jpg"));
  for (const char* escape : {"../../../../etc/passwd", "..", "img/../../x.jpg"}) {
    try {
      image_text::resolve_manifest_path(dir, escape);
      ADD_FAILURE() << escape << " was accepted";
    } catch (const sdk::Error& e) {
      EXPECT_TRUE(says(e.what(), std::string("the relative path \"") + escape + "\" leaves the manifest's directory"))
          << e.what();
    }
  }
}

}  // namespace
}  // namespace kforge::test
