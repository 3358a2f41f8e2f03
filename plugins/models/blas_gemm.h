// Row-major single-precision GEMM through the BLAS LibTorch itself calls (libblas.so.3's sgemm_),
// for kernels that multiply many small tiles where a dispatched at::mm per tile would cost more.
#pragma once

#include <cstdint>

namespace kforge::models {

/// C (m x n) = alpha * op(A) * op(B) + beta * C, all row-major with leading dimensions lda/ldb/ldc;
/// op(X) is X, or X^T when trans_x. Throws sdk::Error when the process has no sgemm_.
void gemm_rowmajor(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);

}  // namespace kforge::models
