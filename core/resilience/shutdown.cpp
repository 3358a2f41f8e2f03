// The shutdown signal handlers and the pending request they record (see shutdown.h).
#include "resilience/shutdown.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace kforge::resilience {
namespace {

std::atomic<int> g_signal{0};
std::atomic<unsigned> g_timeout_sec{0};
int g_installed = 0;  // live ShutdownHandlers

extern "C" void on_shutdown_signal(int sig) {
  g_signal.store(sig);
  const unsigned timeout = g_timeout_sec.load();
  if (timeout > 0) ::alarm(timeout);  // async-signal-safe; SIGALRM's default ends the process
}

unsigned whole_seconds(double timeout_sec) { return timeout_sec > 0 ? static_cast<unsigned>(timeout_sec + 0.5) : 0; }

}  // namespace

ShutdownHandlers::ShutdownHandlers(double timeout_sec)
    : outermost_(g_installed++ == 0), outer_timeout_sec_(g_timeout_sec.load()) {
  g_timeout_sec.store(whole_seconds(timeout_sec));
  if (!outermost_) {
    if (g_signal.load() != 0 && g_timeout_sec.load() > 0) ::alarm(g_timeout_sec.load());
    return;
  }
  g_signal.store(0);
  struct sigaction action {};
  action.sa_handler = on_shutdown_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
  // Ctrl-C saves too; a second Ctrl-C (handler reset to the default) stops at once.
  action.sa_flags |= SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  block_shutdown_signals(false);
}

ShutdownHandlers::~ShutdownHandlers() {
  --g_installed;
  ::alarm(0);
  g_timeout_sec.store(outer_timeout_sec_);
  if (!outermost_) return;
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGUSR1, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
}

bool shutdown_requested() { return g_signal.load() != 0; }

int shutdown_signal() { return g_signal.load(); }

void block_shutdown_signals(bool block) {
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) sigaddset(&signals, sig);
  ::pthread_sigmask(block ? SIG_BLOCK : SIG_UNBLOCK, &signals, nullptr);
}

}  // namespace kforge::resilience
