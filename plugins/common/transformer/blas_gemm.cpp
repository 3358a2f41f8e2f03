// gemm_rowmajor and onednn_gemm_rowmajor (see blas_gemm.h).
#include "blas_gemm.h"

#include <dlfcn.h>

#include <string>

#include "kforge/sdk/error.h"

namespace kforge::builtin::models {
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

// dnnl_sgemm's C signature (oneDNN 2.x, dnnl.h): row-major, dnnl_dim_t = int64_t, 0 = dnnl_success.
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                          float, float*, int64_t);

// Looked up like sgemm_: LibTorch's own libdnnl.so.2, so no build-time oneDNN dependency.
DnnlSgemm dnnl_sgemm() {
  static const auto fn = reinterpret_cast<DnnlSgemm>(::dlsym(RTLD_DEFAULT, "dnnl_sgemm"));
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

bool onednn_gemm_available() { return dnnl_sgemm() != nullptr; }

void onednn_gemm_rowmajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (!onednn_gemm_available()) {
    throw sdk::Error(
        "linear: this process has no oneDNN dnnl_sgemm (LibTorch built without oneDNN?); "
        "set [model] linear_backend = \"aten\"");
  }
  const int status =
      dnnl_sgemm()(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (status != 0) {
    throw sdk::Error("linear: dnnl_sgemm failed with oneDNN status " + std::to_string(status) + " on a " +
                     std::to_string(m) + "x" + std::to_string(k) + " by " + std::to_string(k) + "x" +
                     std::to_string(n) + " product; set [model] linear_backend = \"aten\" to bypass it");
  }
}

}  // namespace kforge::builtin::models
