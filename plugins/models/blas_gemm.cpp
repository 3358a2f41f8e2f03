// gemm_rowmajor (see blas_gemm.h).
#include "blas_gemm.h"

#include <dlfcn.h>

#include "kforge/sdk/error.h"

namespace kforge::models {
namespace {

using Sgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                       const int*, const float*, const int*, const float*, float*, const int*);

// LibTorch links libblas.so.3, so its sgemm_ is in the process's global scope; looking it up (rather
// than linking a BLAS here) guarantees the same library, and thread setting, as at::mm.
Sgemm sgemm() {
  static const auto fn = reinterpret_cast<Sgemm>(::dlsym(RTLD_DEFAULT, "sgemm_"));
  if (fn == nullptr) {
    throw sdk::Error(
        "attention: no BLAS sgemm_ in this process (LibTorch built without BLAS?); "
        "set [model] sdpa_backend = \"math\"");
  }
  return fn;
}

}  // namespace

void gemm_rowmajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands, keep the flags.
  const char ta = trans_b ? 'T' : 'N', tb = trans_a ? 'T' : 'N';
  const int M = static_cast<int>(n), N = static_cast<int>(m), K = static_cast<int>(k);
  const int LDA = static_cast<int>(ldb), LDB = static_cast<int>(lda), LDC = static_cast<int>(ldc);
  sgemm()(&ta, &tb, &M, &N, &K, &alpha, b, &LDA, a, &LDB, &beta, c, &LDC);
}

}  // namespace kforge::models
