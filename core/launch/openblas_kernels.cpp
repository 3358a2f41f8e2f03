// Which OpenBLAS kernels a CPU should run, and the front-end's OPENBLAS_CORETYPE (see openblas_kernels.h).
#include "launch/openblas_kernels.h"

#include <dlfcn.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cstdlib>

namespace kforge::launch {

VectorIsa this_cpus_vector_isa() {
  __builtin_cpu_init();
  VectorIsa isa;
  isa.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  isa.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
               __builtin_cpu_supports("avx512vl");
  return isa;
}

std::optional<std::string> openblas_kernels_for(std::string_view chosen, const VectorIsa& isa) {
  // OpenBLAS 0.3.21's x86-64 kernel sets (the core names in its driver/others/dynamic.c) built without AVX2.
  static constexpr std::array<std::string_view, 21> kWithoutAvx2 = {
      "Unknown", "Katmai",  "Coppermine", "Northwood", "Prescott",     "Banias",    "Atom",
      "Core2",   "Penryn",  "Dunnington", "Nehalem",   "Athlon",       "Opteron",   "Opteron_SSE3",
      "Barcelona", "Nano",  "Sandybridge", "Bobcat",   "Bulldozer",    "Piledriver", "Steamroller"};
  const bool old = std::find(kWithoutAvx2.begin(), kWithoutAvx2.end(), chosen) != kWithoutAvx2.end();
  if (!old || !isa.avx2_fma) return std::nullopt;
  return std::string(isa.avx512 ? "SkylakeX" : "Haswell");
}

std::string openblas_kernels_in(void* handle) {
  using CoreName = char* (*)();
  const auto core_name = reinterpret_cast<CoreName>(::dlsym(handle, "openblas_get_corename"));
  return core_name == nullptr ? std::string() : std::string(core_name());
}

void ask_children_for_the_cpus_openblas_kernels() {
  const char* set = std::getenv("OPENBLAS_CORETYPE");
  if (set != nullptr && *set != '\0') return;
  // Loading OpenBLAS maps its buffer pool, and when an address-space limit refuses the mapping it retries forever
  // (here: under `ulimit -v` below about 400 MB). kforge-host needs about 900 MB to load LibTorch and OpenBLAS, so
  // under a limit below 1 GiB the front-end does not ask and leaves OpenBLAS's choice alone.
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (rlim_t{1} << 30)) {
    return;
  }
  void* blas = ::dlopen("libblas.so.3", RTLD_NOW | RTLD_LOCAL);
  if (blas == nullptr) return;  // kforge-host will say that it cannot load its libraries
  if (const auto kernels = openblas_kernels_for(openblas_kernels_in(blas), this_cpus_vector_isa())) {
    ::setenv("OPENBLAS_CORETYPE", kernels->c_str(), 1);
  }
  ::dlclose(blas);
}

}  // namespace kforge::launch
