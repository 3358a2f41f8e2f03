// The run log: one JSON line per training process start and end in <metrics.run_dir>/runs.jsonl.
#include "train/run_log.h"

#include <fmt/format.h>
#include <torch/version.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <fstream>

#include "env/cpu_env.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/version.h"

namespace kforge::train {
namespace {

double unix_time() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char name[HOST_NAME_MAX + 1] = {};
  return ::gethostname(name, sizeof(name) - 1) == 0 ? std::string(name) : std::string();
}

nlohmann::json environment() {
  const env::CpuInfo cpu = env::detect_cpu();
  const env::BlasInfo blas = env::detect_blas();
  const env::ThreadInfo threads = env::detect_threads();
  const env::MemoryInfo memory = env::detect_memory();
  nlohmann::json isa = nlohmann::json::array();
  for (const auto& [flag, name] :
       {std::pair{cpu.avx2, "avx2"}, std::pair{cpu.fma, "fma"}, std::pair{cpu.avx512f, "avx512f"},
        std::pair{cpu.avx512_bf16, "avx512_bf16"}, std::pair{cpu.amx_bf16, "amx_bf16"}}) {
    if (flag) isa.push_back(name);
  }
  return {{"cpu", cpu.model_name},
          {"usable_cpus", cpu.usable_cpus},
          {"isa", isa},
          {"aten_isa", cpu.torch_capability},
          {"kforge_isa_cap", cpu.kforge_capability},
          {"blas", blas.kind},
          {"blas_library", blas.gemm_provider},
          {"blas_kernels", blas.openblas_kernels},
          {"intra_op_threads", threads.intra_op},
          {"inter_op_threads", threads.inter_op},
          {"transparent_huge_pages", memory.transparent_huge_pages},
          {"heap_huge_pages", memory.heap_huge_pages},
          {"glibc_tunables", memory.glibc_tunables}};
}

}  // namespace

nlohmann::json run_start_event(int64_t step, int64_t resumed_from, int world_size, const nlohmann::json& plugins) {
  return {{"event", "start"},
          {"time", unix_time()},
          {"step", step},
          {"resumed_from", resumed_from >= 0 ? nlohmann::json(resumed_from) : nlohmann::json()},
          {"world_size", world_size},
          {"kforge", KFORGE_SDK_VERSION},
          {"libtorch", TORCH_VERSION},
          {"host", host_name()},
          {"pid", static_cast<int64_t>(::getpid())},
          {"environment", environment()},
          {"plugins", plugins}};
}

nlohmann::json run_end_event(int64_t step, const std::string& outcome) {
  return {{"event", "end"}, {"time", unix_time()}, {"step", step}, {"outcome", outcome}};
}

void append_run_event(const std::filesystem::path& run_dir, const nlohmann::json& event) {
  const std::filesystem::path path = run_dir / "runs.jsonl";
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  std::ofstream out(path, std::ios::app);
  out << event.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  out.flush();
  if (!out) throw sdk::Error(fmt::format("cannot append to the run log {} (disk full or read-only?)", path.string()));
}

}  // namespace kforge::train
