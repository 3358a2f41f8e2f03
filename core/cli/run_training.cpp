#include "cli/run_training.h"

#include <malloc.h>

#include <cstdlib>
#include <utility>

#include "cli/exit_codes.h"
#include "data/data_error.h"
#include "dist/rank_info.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "train/trainer.h"

namespace kforge::cli {
namespace {

// "[rank R]" on every line; rank 0 speaks for the job, the others report only problems
// (KFORGE_LOG_LEVEL overrides). A malformed layout is reported by the trainer instead.
void configure_rank_logging() {
  try {
    const dist::RankInfo info = dist::rank_info_from_env();
    if (!info.distributed()) return;
    log::init(info.rank);
    if (info.rank != 0 && std::getenv("KFORGE_LOG_LEVEL") == nullptr) log::get().set_level(spdlog::level::warn);
  } catch (const sdk::Error&) {
  }
}

}  // namespace

int run_from_cli(const config::JobConfig& job, const plugins::Registry& registry, train::TrainingOptions options) {
  // Keep large tensors' pages between steps: glibc would otherwise unmap and re-fault them (mmap'd tensors on free,
  // the heap's top when more than the trim threshold is free there; -1 never trims).
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, -1);
  configure_rank_logging();
  auto& log = log::get();
  try {
    const train::TrainingResult result = train::run_training(job, registry, std::move(options));
    switch (result.outcome) {
      case train::Outcome::Completed:
        log.info("training complete at step {} ({} tokens)", result.step, result.tokens_seen);
        return kExitOk;
      case train::Outcome::StoppedByHook: return kExitOk;
      case train::Outcome::Preempted: return kExitPreempted;
      case train::Outcome::TooManyNans: return kExitFailure;
    }
  } catch (const std::exception& e) {
    // A config or data error is refused before any step (train/preflight.h): nothing ran.
    if (dynamic_cast<const sdk::ConfigError*>(&e) != nullptr || dynamic_cast<const data::DataError*>(&e) != nullptr) {
      log.error("{}", e.what());
      return kExitUsage;
    }
    log.error("training failed: {}", e.what());
    return kExitFailure;
  }
  return kExitFailure;
}

}  // namespace kforge::cli
