// What the CPU training environment really is: which BLAS LibTorch resolved to, how many threads it
// runs, which vector ISA the CPU offers, and how fast an fp32 GEMM goes. `kforge check-env` prints it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kforge::env {

/// The BLAS behind LibTorch's GEMMs, as the dynamic loader resolved it in this process.
struct BlasInfo {
  std::string alternative;          ///< /usr/lib/x86_64-linux-gnu/libblas.so.3, readlink -f ("" if absent)
  std::string gemm_provider;        ///< the library the loader resolved sgemm_ to (dladdr; "" if unknown)
  std::vector<std::string> mapped;  ///< BLAS/LAPACK libraries mapped into this process (/proc/self/maps)
  std::string kind;                 ///< openblas-openmp, openblas-pthread, openblas-serial, reference, mkl, blis,
                                    ///< nvpl, unknown
  std::string threading;            ///< "openmp", "pthread", "serial" or "unknown"
  bool slow = false;                ///< reference (netlib) BLAS: unoptimised, 10-50x slower GEMMs
  std::string openblas_kernels;     ///< OpenBLAS's kernel set in this process (openblas_get_corename: Haswell, Zen,
                                    ///< SkylakeX, Prescott, ...; launch/openblas_kernels.h); "" if not OpenBLAS
  std::string openblas_coretype;    ///< OPENBLAS_CORETYPE, read by OpenBLAS when it was loaded ("" if unset)
};

struct CpuInfo {
  std::string model_name;  ///< /proc/cpuinfo "model name"
  std::string vendor;      ///< CPUID vendor: GenuineIntel, AuthenticAMD, ... ("" off x86)
  int family = 0;          ///< CPUID display family (Zen 3/4: 25, Zen 5: 26; Intel Core/Xeon: 6)
  int model = 0;           ///< CPUID display model
  int logical_cpus = 0;    ///< online CPUs (std::thread::hardware_concurrency)
  int usable_cpus = 0;     ///< CPUs in this process's affinity mask (sched_getaffinity)
  int physical_cores = 0;  ///< distinct cores among usable_cpus (sysfs topology; usable_cpus if unreadable)
  bool avx2 = false, fma = false, avx512f = false, avx512_bf16 = false, amx_bf16 = false;
  std::string torch_capability;  ///< the ATen kernel ISA in use (DEFAULT/AVX2/AVX512), from at::get_cpu_capability
  std::string kforge_capability;  ///< KFORGE_CPU_CAPABILITY ("" if unset): caps the plugins' vector kernels' width

  /// bf16 arithmetic in hardware (avx512_bf16 dot products or AMX tiles); otherwise LibTorch emulates it.
  bool native_bf16() const { return avx512_bf16 || amx_bf16; }
};

struct ThreadInfo {
  int intra_op = 0;                  ///< at::get_num_threads()
  int inter_op = 0;                  ///< at::get_num_interop_threads()
  std::string omp_num_threads;       ///< the OMP_NUM_THREADS environment variable ("" if unset)
  std::string openblas_num_threads;  ///< OPENBLAS_NUM_THREADS ("" if unset)
};

/// How the malloc heap, where a step's large tensors live (cli/run_training.cpp), gets its pages.
struct MemoryInfo {
  std::string transparent_huge_pages;  ///< the kernel's THP mode: always, madvise or never ("" if unreadable)
  std::string glibc_tunables;          ///< GLIBC_TUNABLES, read by glibc when this process started ("" if unset)
  bool heap_huge_pages = false;        ///< THP "always", or "madvise" with glibc.malloc.hugetlb set non-zero
};

struct EnvReport {
  BlasInfo blas;
  CpuInfo cpu;
  ThreadInfo threads;
  MemoryInfo memory;
  double fma_peak_gflops = 0;  ///< theoretical fp32 peak of the intra-op threads (env/peak_flops.h)
  std::string fma_peak_derivation;
  double gemm_gflops = 0;             ///< measured fp32 1024^3 GEMM, best of 5 (0: not measured)
  double bf16_slowdown = 0;           ///< bf16 GEMM time / fp32 GEMM time (env/bf16_probe.h; 0: not measured)
  std::optional<std::string> bf16_warning;  ///< for bf16 runs, when the CPU has no native bf16 (and measured)
  std::vector<std::string> warnings;  ///< one line each; empty when the environment looks right
};

BlasInfo detect_blas();
CpuInfo detect_cpu();
ThreadInfo detect_threads();
MemoryInfo detect_memory();

/// Everything above plus the FMA peak and the warnings; measure_gemm runs ~0.5 s of fp32 and bf16
/// GEMMs on the current threads.
EnvReport collect(bool measure_gemm);

}  // namespace kforge::env
