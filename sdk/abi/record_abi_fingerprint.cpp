// kforge-abi-fingerprint HEADER_DIR [RECORD_FILE]: prints the SDK headers' fingerprint for this
// KFORGE_PLUGIN_ABI_VERSION and, given RECORD_FILE, records it there (the record_abi_fingerprint target).
#include <cstdio>
#include <exception>

#include "abi_fingerprint.h"
#include "kforge/sdk/abi.h"

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s HEADER_DIR [RECORD_FILE]\n", argv[0]);
    return 2;
  }
  try {
    const std::string fingerprint = kforge::abi::fingerprint_headers(argv[1]);
    std::printf("%u %s\n", KFORGE_PLUGIN_ABI_VERSION, fingerprint.c_str());
    if (argc == 3) {
      kforge::abi::record_fingerprint(argv[2], KFORGE_PLUGIN_ABI_VERSION, fingerprint);
      std::printf("recorded in %s\n", argv[2]);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kforge-abi-fingerprint: %s\n", e.what());
    return 1;
  }
}
