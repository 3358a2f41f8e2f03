// The fields of /proc/PID/stat, read by the launcher (is a rank stopped, where is this process's argument area) and by
// the start-up metric (when was a process created).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace kforge::resilience {

/// The fields of /proc/<pid>/stat (pid 0: this process), field N at index N - 1: the pid, the command name in its
/// parentheses (kept whole, spaces and parentheses in it included), the state, ... Empty when it cannot be read.
std::vector<std::string> proc_stat_fields(pid_t pid = 0);

}  // namespace kforge::resilience
