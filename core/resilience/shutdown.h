// Shutdown on SIGTERM / SIGUSR1 (SLURM preemption) or Ctrl-C (SIGINT): the handler only records
// the request; the loop saves a checkpoint at the next step boundary and exits with
// kExitPreempted. A second Ctrl-C ends the process at once.
#pragma once

namespace kforge::resilience {

/// While alive, the handlers are installed (replacing any previous ones, clearing a pending
/// request); the destructor restores the defaults and cancels a pending forced exit.
class ShutdownHandlers {
 public:
  /// timeout_sec > 0 arms a forced exit (SIGALRM) that long after the signal, in case the save stalls.
  explicit ShutdownHandlers(double timeout_sec);
  ~ShutdownHandlers();
  ShutdownHandlers(const ShutdownHandlers&) = delete;
  ShutdownHandlers& operator=(const ShutdownHandlers&) = delete;
};

/// True once SIGTERM, SIGUSR1 or SIGINT arrived.
bool shutdown_requested();

/// The signal number that requested shutdown (0 if none).
int shutdown_signal();

}  // namespace kforge::resilience
