// Shared checks for the optimizers built from TOML: config text, state snapshots, host-style resume.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "kforge/sdk/optimizer.h"

namespace kforge::test {

/// "[optimizer]" TOML: name, lr, weight_decay, betas = [b1, b2], eps 1e-8, then `extra` lines verbatim.
std::string optimizer_toml(const std::string& name, double lr, double weight_decay, double beta1, double beta2,
                           const std::string& extra = "");

/// A float64 leaf of `shape` holding `values`, requiring grad.
at::Tensor leaf(const std::vector<double>& values, at::IntArrayRef shape);
/// The elements of `t` in row-major order, as doubles.
std::vector<double> values(const at::Tensor& t);

/// EXPECT_NEAR on every element (sizes must agree).
void expect_near(const std::vector<double>& actual, const std::vector<double>& expected, double tolerance);

/// Deep copies of every entry.
sdk::StateDict cloned(const sdk::StateDict& state);

/// Runs the AdamWFixture sequence straight through, and again split at step 3 as the host resumes:
/// use_eval_weights(), snapshot state_dict() and the weights, fresh optimizer on the copied weights,
/// load_state_dict(), use_train_weights(), continue. Expects bit-equal weights and state at the end.
void expect_resume_bit_exact(const std::string& toml, at::ScalarType dtype);

}  // namespace kforge::test
