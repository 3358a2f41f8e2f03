// GLIBC_TUNABLES with huge pages for the heap (see heap_huge_pages.h).
#include "launch/heap_huge_pages.h"

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace kforge::launch {

std::string with_heap_huge_pages(const std::string& tunables) {
  constexpr std::string_view kName = "glibc.malloc.hugetlb";
  // Tunables are name=value pairs separated by ':'; match the name exactly, at the start of a pair.
  for (size_t start = 0; start <= tunables.size();) {
    const size_t end = std::min(tunables.find(':', start), tunables.size());
    const std::string_view pair = std::string_view(tunables).substr(start, end - start);
    if (pair.substr(0, pair.find('=')) == kName) return tunables;
    start = end + 1;
  }
  return tunables.empty() ? std::string(kName) + "=1" : tunables + ":" + std::string(kName) + "=1";
}

void ask_children_for_heap_huge_pages() {
  const char* current = std::getenv("GLIBC_TUNABLES");
  ::setenv("GLIBC_TUNABLES", with_heap_huge_pages(current ? current : "").c_str(), 1);
}

}  // namespace kforge::launch
