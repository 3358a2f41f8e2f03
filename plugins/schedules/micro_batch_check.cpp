// check_micro_batches: the micro-batch count a pipeline schedule needs.
#include "micro_batch_check.h"

#include <kforge/sdk/error.h>

#include <string>

namespace kforge::builtin::schedules {

void check_micro_batches(const char* schedule, int ranks, int micro_batches, bool at_least_ranks,
                         bool multiple_of_ranks) {
  const std::string given = "[train] grad_accum_steps = " + std::to_string(micro_batches) +
                            " (the micro-batches of a step) with [distributed] pp = " + std::to_string(ranks);
  if (micro_batches < 1) throw sdk::ConfigError(given + ": pp_schedule \"" + schedule + "\" needs at least one");
  if (at_least_ranks && micro_batches < ranks) {
    throw sdk::ConfigError(given + ": pp_schedule \"" + schedule +
                           "\" needs at least pp micro-batches to fill the pipeline; raise grad_accum_steps");
  }
  if (multiple_of_ranks && micro_batches % ranks != 0) {
    throw sdk::ConfigError(given + ": pp_schedule \"" + schedule +
                           "\" runs the micro-batches in groups of pp; make grad_accum_steps a multiple of pp");
  }
}

}  // namespace kforge::builtin::schedules
