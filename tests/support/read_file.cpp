#include "support/read_file.h"

#include <fstream>
#include <sstream>

namespace kforge::test {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace kforge::test
