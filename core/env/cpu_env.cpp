// Detection of the BLAS, CPU and threads, and the check-env report (see cpu_env.h).
#include "env/cpu_env.h"

#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <dlfcn.h>
#include <sched.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "env/bf16_probe.h"
#include "env/gemm_rate.h"
#include "env/peak_flops.h"
#include "launch/openblas_kernels.h"

namespace kforge::env {
namespace {

constexpr const char* kBlasAlternative = "/usr/lib/x86_64-linux-gnu/libblas.so.3";

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string basename_of(const std::string& path) { return std::filesystem::path(path).filename().string(); }

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

bool is_blas_library(const std::string& path) {
  const std::string base = basename_of(path);
  return contains(base, "blas") || contains(base, "lapack") || contains(base, "mkl") || contains(base, "blis") ||
         contains(base, "nvpl");
}

// Classify one library path (after symlink resolution). Debian installs OpenBLAS variants under
// /usr/lib/<triplet>/openblas-{openmp,pthread,serial}/ and the netlib reference under .../blas/.
void classify(const std::string& path, BlasInfo& info) {
  if (contains(path, "openblas")) {
    info.kind = "openblas";
    if (contains(path, "openblas-openmp") || contains(path, "openblaso"))
      info.threading = "openmp";
    else if (contains(path, "openblas-pthread") || contains(path, "openblasp"))
      info.threading = "pthread";
    else if (contains(path, "openblas-serial"))
      info.threading = "serial";
    else
      info.threading = "unknown";
    info.kind += "-" + info.threading;
  } else if (contains(path, "mkl")) {
    info.kind = "mkl", info.threading = "unknown";
  } else if (contains(path, "blis")) {
    info.kind = "blis", info.threading = contains(path, "openmp")    ? "openmp"
                                         : contains(path, "pthread") ? "pthread"
                                                                     : "unknown";
  } else if (contains(path, "nvpl")) {
    info.kind = "nvpl", info.threading = "unknown";
  } else if (contains(path, "/blas/") || basename_of(path) == "libblas.so.3" ||
             contains(basename_of(path), "libblas.so")) {
    info.kind = "reference", info.threading = "serial", info.slow = true;
  }
}

// CPUID leaf 0 (vendor) and leaf 1 (family, model, with the extended fields folded in as the SDM and
// AMD's APM define the display values).
void read_cpuid(CpuInfo& cpu) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0, &eax, &ebx, &ecx, &edx) == 0) return;
  char vendor[13] = {};
  std::memcpy(vendor, &ebx, 4), std::memcpy(vendor + 4, &edx, 4), std::memcpy(vendor + 8, &ecx, 4);
  cpu.vendor = vendor;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return;
  const int base_family = static_cast<int>((eax >> 8) & 0xF);
  const int base_model = static_cast<int>((eax >> 4) & 0xF);
  cpu.family = base_family == 0xF ? base_family + static_cast<int>((eax >> 20) & 0xFF) : base_family;
  cpu.model = base_family == 0xF || base_family == 6 ? base_model + (static_cast<int>((eax >> 16) & 0xF) << 4)
                                                     : base_model;
#else
  (void)cpu;
#endif
}

// Distinct (package, core) pairs among the CPUs in `set`; 0 when the sysfs topology is unreadable.
int count_physical_cores(const cpu_set_t& set) {
  std::set<std::pair<int, int>> cores;
  for (int id = 0; id < CPU_SETSIZE; ++id) {
    if (!CPU_ISSET(id, &set)) continue;
    const std::string topology = "/sys/devices/system/cpu/cpu" + std::to_string(id) + "/topology/";
    int package = -1, core = -1;
    std::ifstream(topology + "physical_package_id") >> package;
    std::ifstream(topology + "core_id") >> core;
    if (package < 0 || core < 0) return 0;
    cores.insert({package, core});
  }
  return static_cast<int>(cores.size());
}

}  // namespace

BlasInfo detect_blas() {
  BlasInfo info;
  info.kind = "unknown";
  info.threading = "unknown";
  std::error_code ec;
  if (std::filesystem::exists(kBlasAlternative, ec)) {
    info.alternative = std::filesystem::canonical(kBlasAlternative, ec).string();
    if (ec) info.alternative = kBlasAlternative;
  }
  // What the loader actually mapped: this binary links LibTorch, which links libblas.so.3.
  std::set<std::string> seen;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (is_blas_library(path) && seen.insert(path).second) info.mapped.push_back(path);
  }
  // The library that really serves GEMMs: where the loader resolves sgemm_ for LibTorch (the first
  // libblas.so.3 in the global scope: the alternatives choice, or an LD_LIBRARY_PATH / LD_PRELOAD override).
  std::string deciding;
  if (void* sym = dlsym(RTLD_DEFAULT, "sgemm_")) {
    Dl_info dl{};
    if (dladdr(sym, &dl) != 0 && dl.dli_fname != nullptr) {
      info.gemm_provider = std::filesystem::canonical(dl.dli_fname, ec).string();
      if (ec) info.gemm_provider = dl.dli_fname;
      deciding = info.gemm_provider;
    }
  }
  for (const auto& p : info.mapped) {
    if (!deciding.empty()) break;
    if (contains(basename_of(p), "libblas")) deciding = p;
  }
  if (deciding.empty()) deciding = info.alternative;
  if (!deciding.empty()) classify(deciding, info);
  info.openblas_kernels = launch::openblas_kernels_in(RTLD_DEFAULT);
  info.openblas_coretype = env_or_empty("OPENBLAS_CORETYPE");
  // Debian's OpenBLAS libblas.so.3 lives in openblas-*/; a mapped libopenblas*.so means OpenBLAS too.
  if (info.kind == "reference" && info.gemm_provider.empty()) {
    for (const auto& p : info.mapped) {
      if (contains(p, "openblas")) {
        info.slow = false;
        classify(p, info);
      }
    }
  }
  return info;
}

CpuInfo detect_cpu() {
  CpuInfo cpu;
  cpu.logical_cpus = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t set;
  CPU_ZERO(&set);
  const bool have_set = sched_getaffinity(0, sizeof(set), &set) == 0;
  cpu.usable_cpus = have_set ? CPU_COUNT(&set) : cpu.logical_cpus;
  const int physical = have_set ? count_physical_cores(set) : 0;
  cpu.physical_cores = physical > 0 ? physical : cpu.usable_cpus;
  read_cpuid(cpu);
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  bool have_flags = false;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    const std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && cpu.model_name.empty()) cpu.model_name = value;
    if (key == "flags" && !have_flags) {
      have_flags = true;
      std::istringstream words(value);
      std::string w;
      while (words >> w) {
        if (w == "avx2")
          cpu.avx2 = true;
        else if (w == "fma")
          cpu.fma = true;
        else if (w == "avx512f")
          cpu.avx512f = true;
        else if (w == "avx512_bf16")
          cpu.avx512_bf16 = true;
        else if (w == "amx_bf16")
          cpu.amx_bf16 = true;
      }
    }
  }
  // at::native::get_cpu_capability() is not exported by libtorch_cpu; show_config() reports it.
  const std::string config = at::show_config();
  const std::string marker = "CPU capability usage: ";
  const auto pos = config.find(marker);
  if (pos != std::string::npos) {
    const auto end = config.find('\n', pos);
    cpu.torch_capability =
        config.substr(pos + marker.size(), end == std::string::npos ? end : end - pos - marker.size());
  }
  if (cpu.torch_capability.empty()) cpu.torch_capability = "unknown";
  cpu.kforge_capability = env_or_empty("KFORGE_CPU_CAPABILITY");
  return cpu;
}

ThreadInfo detect_threads() {
  ThreadInfo t;
  t.intra_op = at::get_num_threads();
  t.inter_op = at::get_num_interop_threads();
  t.omp_num_threads = env_or_empty("OMP_NUM_THREADS");
  t.openblas_num_threads = env_or_empty("OPENBLAS_NUM_THREADS");
  return t;
}

MemoryInfo detect_memory() {
  MemoryInfo m;
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");  // e.g. "always [madvise] never"
  std::string modes;
  std::getline(in, modes);
  const size_t open = modes.find('['), close = modes.find(']');
  if (open != std::string::npos && close > open) m.transparent_huge_pages = modes.substr(open + 1, close - open - 1);
  m.glibc_tunables = env_or_empty("GLIBC_TUNABLES");
  constexpr std::string_view kHugetlb = "glibc.malloc.hugetlb=";
  const size_t at = (":" + m.glibc_tunables).find(":" + std::string(kHugetlb));
  const bool asked = at != std::string::npos && at + kHugetlb.size() < m.glibc_tunables.size() &&
                     m.glibc_tunables[at + kHugetlb.size()] != '0';
  m.heap_huge_pages = m.transparent_huge_pages == "always" || (m.transparent_huge_pages == "madvise" && asked);
  return m;
}

EnvReport collect(bool measure_gemm) {
  EnvReport r;
  r.blas = detect_blas();
  r.cpu = detect_cpu();
  r.threads = detect_threads();
  r.memory = detect_memory();
  const PeakFlops peak = peak_flops(r.cpu, cpu_clock(), r.threads.intra_op, /*bf16=*/false);
  r.fma_peak_gflops = peak.gflops, r.fma_peak_derivation = peak.derivation;
  if (measure_gemm) {
    r.gemm_gflops = gemm_gflops(1024, at::kFloat, 5, 0.2);
    r.bf16_slowdown = bf16_gemm_slowdown();
    r.bf16_warning = bf16_warning(r.cpu.native_bf16(), [&] { return r.bf16_slowdown; });
  }

  auto& w = r.warnings;
  if (r.blas.slow) {
    w.push_back("BLAS is the unoptimised reference (netlib) library (" +
                (!r.blas.gemm_provider.empty() ? r.blas.gemm_provider
                 : r.blas.alternative.empty()  ? std::string("libblas.so.3")
                                               : r.blas.alternative) +
                "): GEMMs run 10-50x slower. Install OpenBLAS and select it: apt-get install libopenblas0-openmp && "
                "update-alternatives --set libblas.so.3-x86_64-linux-gnu "
                "/usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3");
  } else if (r.blas.kind == "unknown") {
    w.push_back("could not tell which BLAS LibTorch uses (no BLAS library in /proc/self/maps, " +
                std::string(kBlasAlternative) + " -> '" + r.blas.alternative + "')");
  }
  if (r.blas.threading == "pthread") {
    w.push_back(
        "OpenBLAS is the pthread build while LibTorch parallelises with OpenMP: the two thread pools "
        "oversubscribe the cores. Prefer libopenblas0-openmp (update-alternatives --set "
        "libblas.so.3-x86_64-linux-gnu /usr/lib/x86_64-linux-gnu/openblas-openmp/libblas.so.3)");
  } else if (r.blas.threading == "serial") {
    if (!r.blas.slow)
      w.push_back("OpenBLAS is the serial build: every GEMM runs on one core. Prefer libopenblas0-openmp");
  }
  if (const auto better = launch::openblas_kernels_for(r.blas.openblas_kernels, launch::this_cpus_vector_isa())) {
    w.push_back("OpenBLAS runs its " + r.blas.openblas_kernels + " kernels, without AVX2, on this CPU, which has " +
                (*better == "SkylakeX" ? "AVX-512" : "AVX2") +
                " (OpenBLAS picks them by CPU model and falls back to these on a model it does not know): its GEMMs "
                "run several times slower than with its " +
                *better + " kernels. `kforge` sets OPENBLAS_CORETYPE=" + *better +
                " for the processes it starts unless OPENBLAS_CORETYPE is set (it is " +
                (r.blas.openblas_coretype.empty() ? std::string("unset") : "'" + r.blas.openblas_coretype + "'") +
                "); when running kforge-host directly, set OPENBLAS_CORETYPE=" + *better + " yourself");
  }
  if (!r.cpu.avx2 || !r.cpu.fma) {
    w.push_back(
        "the CPU reports no AVX2/FMA (/proc/cpuinfo flags): fp32 GEMM and elementwise kernels fall back to "
        "SSE and run several times slower");
  }
  if (r.cpu.torch_capability == "DEFAULT" || r.cpu.torch_capability == "NO AVX") {
    w.push_back("LibTorch dispatches its CPU kernels to the generic (" + r.cpu.torch_capability +
                ") variant; check ATEN_CPU_CAPABILITY in the environment");
  }
  const int cores = std::max(1, r.cpu.usable_cpus);
  if (r.threads.intra_op > cores) {
    w.push_back("LibTorch uses " + std::to_string(r.threads.intra_op) + " intra-op threads on " +
                std::to_string(cores) + " usable CPUs: oversubscribed. Set [train] num_threads or OMP_NUM_THREADS to " +
                std::to_string(cores));
  } else if (r.threads.intra_op < cores) {
    w.push_back(
        "LibTorch uses " + std::to_string(r.threads.intra_op) + " intra-op thread(s) of " + std::to_string(cores) +
        " usable CPUs (OMP_NUM_THREADS=" + (r.threads.omp_num_threads.empty() ? "unset" : r.threads.omp_num_threads) +
        "); kforge run uses [train] num_threads (0 = all cores)");
  }
  if (r.memory.transparent_huge_pages == "madvise" && !r.memory.heap_huge_pages) {
    w.push_back(
        "the kernel gives transparent huge pages only on request (madvise) and this process's heap does not "
        "ask (GLIBC_TUNABLES='" +
        r.memory.glibc_tunables +
        "'): every first touch of a large tensor faults in 4 KiB pages, which can make start-up and the first "
        "step several times slower. `kforge` adds glibc.malloc.hugetlb=1 for the processes it starts; when "
        "running kforge-host directly, set GLIBC_TUNABLES=glibc.malloc.hugetlb=1 yourself");
  }
  // A modern x86 core with AVX2+FMA does 8-30 fp32 GFLOP/s in a 1024^3 GEMM; reference BLAS does ~1-3.
  if (measure_gemm && r.gemm_gflops > 0 && r.gemm_gflops / std::max(1, r.threads.intra_op) < 5.0) {
    w.push_back("fp32 GEMM measured " + std::to_string(static_cast<int>(r.gemm_gflops + 0.5)) + " GFLOP/s on " +
                std::to_string(r.threads.intra_op) +
                " thread(s) (< 5 GFLOP/s per thread): a slow BLAS, a "
                "throttled or shared CPU, or oversubscribed threads");
  }
  return r;
}

}  // namespace kforge::env
