// xxhsum: run it and pick the hex digits out of its line, in either of its output styles.
#include "support/xxhsum.h"

#include <gtest/gtest.h>

#include <cctype>

#include "support/test_host.h"

namespace kforge::test {

bool xxhsum_available() { return run_command("command -v xxhsum") == 0; }

std::string xxhsum_h3(const std::filesystem::path& file) {
  std::string output;
  if (run_command("xxhsum -H3 '" + file.string() + "'", &output) != 0) {
    ADD_FAILURE() << "xxhsum -H3 " << file << " failed: " << output;
    return output;
  }
  // BSD style "XXH3 (FILE) = <hex>" (xxhsum 0.8.1), or GNU style "XXH3_<hex>  FILE" (later releases).
  const size_t equals = output.rfind(" = ");
  std::string hex = equals != std::string::npos ? output.substr(equals + 3) : output.substr(0, output.find(' '));
  if (hex.rfind("XXH3_", 0) == 0) hex.erase(0, 5);
  while (!hex.empty() && std::isspace(static_cast<unsigned char>(hex.back()))) hex.pop_back();
  return hex;
}

}  // namespace kforge::test
