// Row-major single-precision GEMMs through the libraries LibTorch itself links: libblas.so.3's sgemm_
// (what at::mm calls) and oneDNN's dnnl_sgemm (faster on this project's projection shapes).
#pragma once

#include <cstdint>

namespace kforge::builtin::models {

/// C (m x n) = alpha * op(A) * op(B) + beta * C, all row-major with leading dimensions lda/ldb/ldc;
/// op(X) is X, or X^T when trans_x. Throws sdk::Error when the process has no sgemm_.
void gemm_rowmajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

/// True when the process has oneDNN's dnnl_sgemm (Debian's LibTorch links libdnnl.so.2).
bool onednn_gemm_available();

/// gemm_rowmajor through dnnl_sgemm; throws sdk::Error when it is missing or reports a failure.
void onednn_gemm_rowmajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace kforge::builtin::models
