// Shutdown on SIGTERM / SIGUSR1 (SLURM preemption) or Ctrl-C (SIGINT): the handler only records
// the request; the loop saves a checkpoint at the next step boundary and exits with
// kExitPreempted. A second Ctrl-C ends the process at once.
#pragma once

namespace kforge::resilience {

/// Installs the handlers (replacing any previous ones) and clears a pending request.
/// timeout_sec > 0 arms a forced exit (SIGALRM) that long after the signal, in case the save stalls.
void install_shutdown_handlers(double timeout_sec);

/// Restores the default handlers and cancels a pending forced exit.
void remove_shutdown_handlers();

/// True once SIGTERM, SIGUSR1 or SIGINT arrived.
bool shutdown_requested();

/// The signal number that requested shutdown (0 if none).
int shutdown_signal();

}  // namespace kforge::resilience
