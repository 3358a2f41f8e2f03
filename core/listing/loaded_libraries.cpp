#include "listing/loaded_libraries.h"

#include <link.h>

#include <filesystem>

namespace kforge::listing {

std::vector<std::string> loaded_libraries() {
  std::vector<std::string> out;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        // The executable has an empty name and the vDSO a bare one: neither is a file to check.
        std::error_code ec;
        const std::filesystem::path path = std::filesystem::absolute(name, ec);
        if (name.find('/') != std::string::npos && !ec) {
          static_cast<std::vector<std::string>*>(data)->push_back(path.string());
        }
        return 0;
      },
      &out);
  return out;
}

}  // namespace kforge::listing
