#include "train/run.h"

#include <malloc.h>

#include "cli/exit_codes.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "train/trainer.h"

namespace kforge::train {

int run_from_cli(const config::JobConfig& job, const plugins::Registry& registry) {
  // Keep large tensors' pages between steps: glibc would otherwise unmap and re-fault them.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  auto& log = log::get();
  try {
    const TrainingResult result = run_training(job, registry);
    switch (result.outcome) {
      case Outcome::Completed:
        log.info("training complete at step {} ({} tokens)", result.step, result.tokens_seen);
        return cli::kExitOk;
      case Outcome::StoppedByHook: return cli::kExitOk;
      case Outcome::Preempted: return cli::kExitPreempted;
      case Outcome::TooManyNans: return cli::kExitFailure;
    }
  } catch (const sdk::ConfigError& e) {
    log.error("{}", e.what());
    return cli::kExitUsage;
  } catch (const std::exception& e) {
    log.error("training failed: {}", e.what());
    return cli::kExitFailure;
  }
  return cli::kExitFailure;
}

}  // namespace kforge::train
