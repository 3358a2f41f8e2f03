// kforge check-env: which BLAS, threads and ISA this process trains with, the FMA peak MFU is measured
// against, measured fp32 and bf16 GEMMs, and loud warnings on a slow setup. Exit 0 unless --strict
// and something was warned about (then 1); the bf16 warning concerns bf16 runs only and never fails it.
#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cxxopts.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "env/cpu_env.h"

namespace kforge::cli {
namespace {

const char* yes_no(bool b) { return b ? "yes" : "no"; }

nlohmann::json to_json(const env::EnvReport& r) {
  return {{"blas",
           {{"kind", r.blas.kind},
            {"threading", r.blas.threading},
            {"libblas_so_3", r.blas.alternative},
            {"sgemm_provider", r.blas.gemm_provider},
            {"mapped", r.blas.mapped},
            {"slow", r.blas.slow},
            {"openblas_kernels", r.blas.openblas_kernels},
            {"OPENBLAS_CORETYPE", r.blas.openblas_coretype}}},
          {"cpu",
           {{"model_name", r.cpu.model_name},
            {"vendor", r.cpu.vendor},
            {"family", r.cpu.family},
            {"model", r.cpu.model},
            {"logical_cpus", r.cpu.logical_cpus},
            {"usable_cpus", r.cpu.usable_cpus},
            {"physical_cores", r.cpu.physical_cores},
            {"avx2", r.cpu.avx2},
            {"fma", r.cpu.fma},
            {"avx512f", r.cpu.avx512f},
            {"avx512_bf16", r.cpu.avx512_bf16},
            {"amx_bf16", r.cpu.amx_bf16},
            {"torch_capability", r.cpu.torch_capability},
            {"KFORGE_CPU_CAPABILITY", r.cpu.kforge_capability}}},
          {"threads",
           {{"intra_op", r.threads.intra_op},
            {"inter_op", r.threads.inter_op},
            {"OMP_NUM_THREADS", r.threads.omp_num_threads},
            {"OPENBLAS_NUM_THREADS", r.threads.openblas_num_threads}}},
          {"memory",
           {{"transparent_huge_pages", r.memory.transparent_huge_pages},
            {"GLIBC_TUNABLES", r.memory.glibc_tunables},
            {"heap_huge_pages", r.memory.heap_huge_pages}}},
          {"fma_peak_gflops", r.fma_peak_gflops},
          {"fma_peak_derivation", r.fma_peak_derivation},
          {"gemm_fp32_gflops", r.gemm_gflops},
          {"bf16",
           {{"native", r.cpu.native_bf16()},
            {"gemm_slowdown_vs_fp32", r.bf16_slowdown},
            {"warning", r.bf16_warning ? nlohmann::json(*r.bf16_warning) : nlohmann::json(nullptr)}}},
          {"warnings", r.warnings}};
}

void print_text(const env::EnvReport& r) {
  std::cout << fmt::format("BLAS        {} (threading: {})\n", r.blas.kind, r.blas.threading);
  if (!r.blas.openblas_kernels.empty()) {
    std::cout << fmt::format("  kernels   OpenBLAS's {} (OPENBLAS_CORETYPE={})\n", r.blas.openblas_kernels,
                             r.blas.openblas_coretype.empty() ? "unset" : r.blas.openblas_coretype);
  }
  std::cout << fmt::format("  libblas.so.3 -> {}\n", r.blas.alternative.empty() ? "(absent)" : r.blas.alternative);
  std::cout << fmt::format("  sgemm_ in  {}\n", r.blas.gemm_provider.empty() ? "(not resolved)" : r.blas.gemm_provider);
  for (const auto& m : r.blas.mapped) std::cout << fmt::format("  mapped      {}\n", m);
  std::cout << fmt::format("CPU         {} ({} family {:#x} model {:#x}; {} logical, {} usable by this process on {} "
                           "physical cores)\n",
                           r.cpu.model_name.empty() ? "unknown" : r.cpu.model_name, r.cpu.vendor, r.cpu.family,
                           r.cpu.model, r.cpu.logical_cpus, r.cpu.usable_cpus, r.cpu.physical_cores);
  std::cout << fmt::format(
      "  ISA       avx2={} fma={} avx512f={} avx512_bf16={} amx_bf16={}; LibTorch kernels: {}; "
      "kforge kernels: {}\n",
      yes_no(r.cpu.avx2), yes_no(r.cpu.fma), yes_no(r.cpu.avx512f), yes_no(r.cpu.avx512_bf16), yes_no(r.cpu.amx_bf16),
      r.cpu.torch_capability,
      r.cpu.kforge_capability.empty() ? "the widest the CPU runs" : "KFORGE_CPU_CAPABILITY=" + r.cpu.kforge_capability);
  std::cout << fmt::format("Threads     intra-op {}, inter-op {}, OMP_NUM_THREADS={}, OPENBLAS_NUM_THREADS={}\n",
                           r.threads.intra_op, r.threads.inter_op,
                           r.threads.omp_num_threads.empty() ? "unset" : r.threads.omp_num_threads,
                           r.threads.openblas_num_threads.empty() ? "unset" : r.threads.openblas_num_threads);
  std::cout << fmt::format("Memory      transparent huge pages: {}; for the heap: {} (GLIBC_TUNABLES={})\n",
                           r.memory.transparent_huge_pages.empty() ? "unknown" : r.memory.transparent_huge_pages,
                           yes_no(r.memory.heap_huge_pages),
                           r.memory.glibc_tunables.empty() ? "unset" : r.memory.glibc_tunables);
  std::cout << fmt::format("FMA peak    {} (the MFU peak of fp32 runs)\n", r.fma_peak_derivation);
  if (r.gemm_gflops > 0) {
    std::cout << fmt::format("GEMM        fp32 1024^3: {:.1f} GFLOP/s on {} thread(s) ({:.1f} per thread, {:.0f}% of "
                             "the FMA peak)\n",
                             r.gemm_gflops, r.threads.intra_op, r.gemm_gflops / std::max(1, r.threads.intra_op),
                             100 * r.gemm_gflops / r.fma_peak_gflops);
    std::cout << fmt::format("bf16        a bf16 GEMM takes {:.2f}x the fp32 time; native bf16: {}\n", r.bf16_slowdown,
                             yes_no(r.cpu.native_bf16()));
  }
  if (r.bf16_warning) std::cerr << "WARNING (bf16 runs): " << *r.bf16_warning << "\n";
  if (r.warnings.empty()) {
    std::cout << "OK          no problems found\n";
  } else {
    for (const auto& w : r.warnings) std::cerr << "WARNING: " << w << "\n";
    std::cerr << fmt::format("WARNING: {} problem(s) above can make training much slower than it should be\n",
                             r.warnings.size());
  }
}

}  // namespace

cxxopts::Options check_env_options() {
  cxxopts::Options options("kforge check-env",
                           "Report the BLAS, threads and CPU ISA kforge trains with; warn on a slow setup");
  options.add_options()("threads", "intra-op threads to check (0: all cores, as [train] num_threads = 0)",
                        cxxopts::value<int>()->default_value("0"))("no-gemm", "skip the GEMM measurements (~0.5 s)")(
      "json", "print one JSON object")("strict", "exit 1 when anything was warned about")("h,help", "show this help");
  return options;
}

int cmd_check_env(int argc, char** argv) {
  cxxopts::Options options = check_env_options();
  const ParsedOptions parsed = parse_options(options, argc, argv);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;
  // Same choice as kforge run: [train] num_threads, 0 meaning every core.
  const int threads = args["threads"].as<int>();
  if (threads < 0) {
    std::cerr << "kforge check-env: --threads must be >= 0\n";
    return kExitUsage;
  }
  at::set_num_threads(threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  const env::EnvReport report = env::collect(!args.count("no-gemm"));
  if (args.count("json")) {
    std::cout << to_json(report).dump(2) << "\n";
  } else {
    print_text(report);
  }
  return args.count("strict") && !report.warnings.empty() ? kExitFailure : kExitOk;
}

}  // namespace kforge::cli
