// The front-end starts kforge-host (and launch's workers) with huge pages for the malloc heap, unless the
// user's GLIBC_TUNABLES says otherwise; check-env reports what the process got.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "launch/heap_huge_pages.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

TEST(HeapHugePages, AddedToTheTunablesUnlessTheyChooseAlready) {
  using launch::with_heap_huge_pages;
  EXPECT_EQ(with_heap_huge_pages(""), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(with_heap_huge_pages("glibc.malloc.mmap_max=0"), "glibc.malloc.mmap_max=0:glibc.malloc.hugetlb=1");
  EXPECT_EQ(with_heap_huge_pages("glibc.malloc.hugetlb=0"), "glibc.malloc.hugetlb=0");
  EXPECT_EQ(with_heap_huge_pages("glibc.malloc.mmap_max=0:glibc.malloc.hugetlb=2"),
            "glibc.malloc.mmap_max=0:glibc.malloc.hugetlb=2");
  // Only the exact name counts, wherever the pair is.
  EXPECT_EQ(with_heap_huge_pages("glibc.malloc.hugetlbx=1"), "glibc.malloc.hugetlbx=1:glibc.malloc.hugetlb=1");
  EXPECT_EQ(with_heap_huge_pages("x.glibc.malloc.hugetlb=0"), "x.glibc.malloc.hugetlb=0:glibc.malloc.hugetlb=1");
}

// `kforge check-env --json`'s "memory" object, run with `env_prefix` before the front-end.
nlohmann::json memory_of_host(const std::string& env_prefix) {
  std::string out;
  const int status = run_command(env_prefix + " '" + KFORGE_BIN + "' check-env --json --no-gemm 2>/dev/null", &out);
  EXPECT_EQ(status, 0) << out;
  return nlohmann::json::parse(out).at("memory");
}

std::string kernel_thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(in, modes);
  const size_t open = modes.find('['), close = modes.find(']');
  return open == std::string::npos ? "" : modes.substr(open + 1, close - open - 1);
}

TEST(HeapHugePages, TheFrontEndAsksForThemForTheHostItStarts) {
  const std::string mode = kernel_thp_mode();
  const nlohmann::json plain = memory_of_host("env -u GLIBC_TUNABLES");
  EXPECT_EQ(plain.at("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(plain.at("transparent_huge_pages"), mode);
  EXPECT_EQ(plain.at("heap_huge_pages"), mode == "always" || mode == "madvise") << plain.dump();

  const nlohmann::json kept = memory_of_host("env GLIBC_TUNABLES=glibc.malloc.mmap_max=0");
  EXPECT_EQ(kept.at("GLIBC_TUNABLES"), "glibc.malloc.mmap_max=0:glibc.malloc.hugetlb=1");

  const nlohmann::json refused = memory_of_host("env GLIBC_TUNABLES=glibc.malloc.hugetlb=0");
  EXPECT_EQ(refused.at("GLIBC_TUNABLES"), "glibc.malloc.hugetlb=0");
  EXPECT_EQ(refused.at("heap_huge_pages"), mode == "always") << refused.dump();
}

}  // namespace
}  // namespace kforge::test
