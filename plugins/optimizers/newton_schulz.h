// Quintic Newton–Schulz orthogonalisation used by Muon (coefficients 3.4445, -4.7750, 2.0315).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace kforge::builtin::optimizers {

/// G viewed as 2-D (dim 0 by the rest), in float32: X = G / (||G||_F + 1e-7), then `steps` times
/// A = X X^T, B = b A + c A^2, X = a X + B X (on the wide orientation). Returns the 2-D float32 X,
/// whose singular values land roughly in [0.7, 1.2] rather than exactly 1.
at::Tensor newton_schulz(const at::Tensor& g, int64_t steps);

}  // namespace kforge::builtin::optimizers
