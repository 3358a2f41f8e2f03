// Process exit codes of the kforge CLI.
#pragma once

namespace kforge::cmdline {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;     ///< training failed (error, too many NaN losses)
inline constexpr int kExitUsage = 2;       ///< bad command line, config or plugin set: nothing ran
inline constexpr int kExitPreempted = 75;  ///< stopped by SIGTERM/SIGUSR1 after a checkpoint: rerun to resume

}  // namespace kforge::cmdline
