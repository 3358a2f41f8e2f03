// Fuzz target: a list-plugins cache entry read by listing::lookup (core/listing/listing_cache).
// Input: an entry body (length-prefixed fields), written under a header with its correct checksum so the
// fields are reached; an input starting with the header's magic is written as it is.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "listing/listing_cache.h"
#include "scratch_file.h"

namespace {

constexpr const char* kListingMagic = "kforge-listing-cache 1 ";
// The host and arguments the corpus's entries are keyed for (their key field).
constexpr const char* kListingHost = "/kforge-fuzz/bin/kforge-host";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> args = {"list-plugins"};
  static const std::filesystem::path entry = [] {
    setenv("KFORGE_CACHE_DIR", kforge::fuzz::scratch_dir().c_str(), 1);
    unsetenv("LD_LIBRARY_PATH");  // part of the key; the loader read it at start-up already
    unsetenv("LD_PRELOAD");
    unsetenv("KFORGE_NO_CATALOGUE_CACHE");
    // Where lookup looks: store() names the file after the key.
    kforge::listing::store({kforge::listing::key(kListingHost, args), {}, {}, "", ""});
    for (const auto& file : std::filesystem::directory_iterator(kforge::fuzz::scratch_dir())) {
      if (file.path().extension() == ".entry") return file.path();
    }
    std::fprintf(stderr, "fuzz harness: listing::store wrote no entry\n");
    std::abort();
  }();
  std::string text(reinterpret_cast<const char*>(data), size);
  if (text.rfind(kListingMagic, 0) != 0) text = kforge::listing::sealed_entry(text);
  kforge::fuzz::write_bytes(entry, reinterpret_cast<const uint8_t*>(text.data()), text.size());
  kforge::listing::lookup(kListingHost, args);  // documented never to throw: any exception is a finding
  return 0;
}
