// How long this process has existed: the start-up time the training loop logs at its first step.
#pragma once

#include <sys/types.h>

namespace kforge::metrics {

/// Seconds since process `pid` (0: this one) was created: the kernel's start time in /proc/PID/stat, to the clock tick
/// (usually 10 ms). exec keeps it, so for `kforge run` it counts from the shell's fork. Throws if /proc cannot be read
/// (or `pid` is gone).
double process_age_seconds(pid_t pid = 0);

/// The start-up this process logs: its age, or, for a worker `kforge launch` forked (KFORGE_LAUNCHER_PID names its
/// parent), the launcher's, which loaded LibTorch for it before the fork.
double start_up_seconds();

}  // namespace kforge::metrics
