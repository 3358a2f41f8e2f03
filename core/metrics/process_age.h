// How long this process has existed: the start-up time the training loop logs at its first step.
#pragma once

#include <sys/types.h>

namespace kforge::metrics {

/// Seconds since process `pid` (0: this one) was created: the kernel's start time in /proc/PID/stat, to the clock tick
/// (usually 10 ms). exec keeps it, so for `kforge run` it counts from the shell's fork, and for a launched rank from
/// the launcher's. Throws if /proc cannot be read (or `pid` is gone).
double process_age_seconds(pid_t pid = 0);

}  // namespace kforge::metrics
