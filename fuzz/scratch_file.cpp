// Scratch files for fuzz targets whose entry point reads a path (see scratch_file.h).
#include "scratch_file.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace kforge::fuzz {

namespace {

// Never destroyed, so the exit handler can still read it.
const std::filesystem::path* scratch_path = nullptr;

void remove_scratch_dir() {
  std::error_code ec;
  std::filesystem::remove_all(*scratch_path, ec);
}

}  // namespace

const std::filesystem::path& scratch_dir() {
  if (scratch_path == nullptr) {
    const char* tmp = std::getenv("TMPDIR");
    scratch_path = new std::filesystem::path(std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
                                             ("kforge-fuzz-" + std::to_string(::getpid())));
    std::filesystem::create_directories(*scratch_path);
    std::atexit(remove_scratch_dir);
  }
  return *scratch_path;
}

void write_bytes(const std::filesystem::path& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out.flush()) {
    std::fprintf(stderr, "fuzz harness: cannot write %s\n", path.c_str());
    std::abort();
  }
}

}  // namespace kforge::fuzz
