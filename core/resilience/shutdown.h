// Shutdown on SIGTERM / SIGUSR1 (SLURM preemption) or Ctrl-C (SIGINT): the handler only records
// the request; the loop saves a checkpoint at the next step boundary and exits with
// kExitPreempted. A second Ctrl-C ends the process at once.
#pragma once

namespace kforge::resilience {

/// While alive, the handlers are installed. The outermost instance replaces any previous handlers,
/// clears a pending request and unblocks the three signals (a parent may block them across exec, so
/// that one sent during start-up waits for the handlers instead of killing the process). An
/// instance made while another is alive (the training loop's, inside `kforge run`, which installs
/// them at process start) keeps a pending request, so a signal during start-up is not lost, and
/// only sets the forced-exit timeout, arming it at once when a request is pending. The outermost's
/// destructor restores the defaults; an inner one restores the outer's timeout; both cancel a
/// pending forced exit.
class ShutdownHandlers {
 public:
  /// timeout_sec > 0 arms a forced exit (SIGALRM) that long after the signal, in case the save stalls.
  explicit ShutdownHandlers(double timeout_sec);
  ~ShutdownHandlers();
  ShutdownHandlers(const ShutdownHandlers&) = delete;
  ShutdownHandlers& operator=(const ShutdownHandlers&) = delete;

 private:
  bool outermost_;
  unsigned outer_timeout_sec_;
};

/// True once SIGTERM, SIGUSR1 or SIGINT arrived.
bool shutdown_requested();

/// The signal number that requested shutdown (0 if none).
int shutdown_signal();

/// Blocks SIGTERM, SIGUSR1 and SIGINT in the calling thread (the mask survives fork and exec), or
/// unblocks them: a signal sent meanwhile stays pending until then.
void block_shutdown_signals(bool block);

}  // namespace kforge::resilience
