// The micro-batch count a pipeline schedule needs, checked with a message naming the keys.
#pragma once

namespace kforge::builtin::schedules {

/// Throws sdk::ConfigError naming [train] grad_accum_steps and [distributed] pp unless `micro_batches` >= 1, and, when
/// `at_least_ranks`, >= `ranks`, and, when `multiple_of_ranks`, a multiple of `ranks`; `schedule` names the schedule.
void check_micro_batches(const char* schedule, int ranks, int micro_batches, bool at_least_ranks,
                         bool multiple_of_ranks);

}  // namespace kforge::builtin::schedules
