// OpenBLAS's kernels on a CPU newer than it: Debian 12's OpenBLAS 0.3.21 (a DYNAMIC_ARCH build) picks its kernels
// by CPU model, and on a model it does not know (an Emerald Rapids Xeon, family 6 model 207) it falls back to its
// SSE3 "Prescott" ones: 4-5x slower fp32 GEMMs than its AVX-512 ("SkylakeX") kernels on the same CPU. OpenBLAS reads
// OPENBLAS_CORETYPE once, when it is loaded, so the front-end asks it which kernels it chose and, when they predate
// the CPU's AVX2, names the CPU's in OPENBLAS_CORETYPE for the kforge-host it starts.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kforge::launch {

/// The vector instructions OpenBLAS's x86 kernel sets are built for, as this CPU and kernel offer them.
struct VectorIsa {
  bool avx2_fma = false;  ///< AVX2 and FMA (OpenBLAS's "Haswell" kernels)
  bool avx512 = false;    ///< AVX-512 F, CD, BW, DQ and VL (its "SkylakeX" kernels)
};

/// This CPU's, by CPUID and the kernel's saved register state (__builtin_cpu_supports).
VectorIsa this_cpus_vector_isa();

/// The kernels (an OPENBLAS_CORETYPE value) a CPU with `isa` should run when OpenBLAS chose `chosen`
/// (openblas_get_corename()): "SkylakeX" or "Haswell" when `chosen` is one of OpenBLAS's kernel sets without AVX2
/// (Prescott, Nehalem, Sandybridge, ...) and the CPU has AVX2 and FMA; nullopt when OpenBLAS's choice stands (it
/// knows the CPU, the CPU has no AVX2, or `chosen` is a name this list does not know).
std::optional<std::string> openblas_kernels_for(std::string_view chosen, const VectorIsa& isa);

/// OpenBLAS's kernel set in the library `handle` (dlopen's, or RTLD_DEFAULT for the process): its
/// openblas_get_corename() ("Haswell", "Zen", "SkylakeX", "Prescott", ...); "" when that is not OpenBLAS.
std::string openblas_kernels_in(void* handle);

/// Unless OPENBLAS_CORETYPE is set and not empty (the user's choice wins) or the address space is limited below 1 GiB
/// (where loading OpenBLAS can hang): loads the system BLAS (libblas.so.3, as LibTorch does), and when it is OpenBLAS
/// and openblas_kernels_for() names better kernels than it chose, sets OPENBLAS_CORETYPE to them for the processes this
/// one execs. About 3 ms.
void ask_children_for_the_cpus_openblas_kernels();

}  // namespace kforge::launch
