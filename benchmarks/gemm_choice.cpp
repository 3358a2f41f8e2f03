// The weight-gradient GEMM, dW [out, in] = dy^T x over `rows` tokens, through oneDNN and through OpenBLAS on this CPU,
// for the projections of the benchmark shapes: the measurement behind the table of
// plugins/common/transformer/weight_gradient_gemm.cpp.
// A measurement, not a test (benchmarks/README.md).
//
//   OPENBLAS_CORETYPE=<the kernels kforge runs> build/tests/plugins/models/bench_gemm_choice [--rows R] [--threads T]
//                                                                                           [--reps N]
//
// Run it with the OpenBLAS kernels kforge's front-end picks (`kforge check-env` names them): on a CPU newer than
// Debian's OpenBLAS, its own choice is its slow SSE3 kernels. Each shape alternates the two libraries, best of N.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "transformer/weight_gradient_gemm.h"

namespace {

using kforge::builtin::models::GemmLibrary;

struct Options {
  int64_t rows = 2048, threads = 2, reps = 10;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
    const int64_t value = std::atoll(argv[++i]);
    if (value <= 0) throw std::invalid_argument(flag + " needs a positive value");
    if (flag == "--rows") {
      o.rows = value;
    } else if (flag == "--threads") {
      o.threads = value;
    } else if (flag == "--reps") {
      o.reps = value;
    } else {
      throw std::invalid_argument("unknown option " + flag + " (--rows, --threads, --reps)");
    }
  }
  return o;
}

struct Weight {
  int64_t out, in;
  const char* what;
};

// The projections of benchmarks/configs: bench_small (dim 512, GQA 4 of 8 heads, MLP 1536, vocab 16384) and
// bench_debug (dim 256, MLP 768, vocab 32000).
const Weight kWeights[] = {
    {256, 512, "small k/v"},     {512, 512, "small q/o"},    {1536, 512, "small gate/up"},
    {512, 1536, "small down"},   {16384, 512, "small head"}, {256, 256, "debug q/k/v/o"},
    {768, 256, "debug gate/up"}, {256, 768, "debug down"},   {32000, 256, "debug head"},
};

/// Milliseconds of `library` computing dW for `w` once.
double time_ms(GemmLibrary library, const Weight& w, const at::Tensor& dy, const at::Tensor& x, at::Tensor& dw) {
  kforge::builtin::models::force_weight_gradient_library(library);
  const auto start = std::chrono::steady_clock::now();
  kforge::builtin::models::weight_gradient(w.out, w.in, x.size(0), dy.data_ptr<float>(), x.data_ptr<float>(),
                                           dw.data_ptr<float>());
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  at::set_num_threads(static_cast<int>(o.threads));
  const auto entry = kforge::builtin::models::weight_gradient_entry();
  fmt::print("CPU vendor {}, OpenBLAS kernels \"{}\", {} threads, {} rows, best of {}\n",
             kforge::builtin::models::cpu_vendor(), kforge::builtin::models::openblas_kernels(), o.threads, o.rows,
             o.reps);
  fmt::print("the table's entry for this CPU: {}\n\n",
             entry ? fmt::format("OpenBLAS from {} weight elements", entry->min_weight_elements)
                   : std::string("none (oneDNN for every weight gradient)"));
  fmt::print("| weight | out x in | oneDNN (ms) | OpenBLAS (ms) | oneDNN / OpenBLAS |\n|---|---|---|---|---|\n");
  // The smallest size from which OpenBLAS is faster for every larger weight measured: the table's threshold.
  std::vector<std::pair<int64_t, bool>> faster;  // (elements, OpenBLAS faster)
  for (const Weight& w : kWeights) {
    const at::Tensor dy = at::randn({o.rows, w.out}), x = at::randn({o.rows, w.in});
    at::Tensor dw = at::empty({w.out, w.in});
    double onednn = 1e300, openblas = 1e300;
    for (int64_t r = 0; r < o.reps; ++r) {
      onednn = std::min(onednn, time_ms(GemmLibrary::OneDnn, w, dy, x, dw));
      openblas = std::min(openblas, time_ms(GemmLibrary::OpenBlas, w, dy, x, dw));
    }
    fmt::print("| {} | {} x {} | {:.2f} | {:.2f} | {:.2f} |\n", w.what, w.out, w.in, onednn, openblas,
               onednn / openblas);
    faster.emplace_back(w.out * w.in, openblas < onednn);
  }
  kforge::builtin::models::force_weight_gradient_library(std::nullopt);
  std::sort(faster.begin(), faster.end());
  int64_t threshold = -1;
  for (auto it = faster.rbegin(); it != faster.rend() && it->second; ++it) threshold = it->first;
  fmt::print("\nOpenBLAS is faster for every weight from {} elements up\n",
             threshold > 0 ? std::to_string(threshold) : std::string("(none: oneDNN wins at the largest)"));
  return 0;
} catch (const std::exception& e) {
  fmt::print(stderr, "bench_gemm_choice: {}\n", e.what());
  return 2;
}
