#include "resilience/shutdown.h"

#include <unistd.h>

#include <atomic>
#include <csignal>

namespace kforge::resilience {
namespace {

std::atomic<int> g_signal{0};
unsigned g_timeout_sec = 0;

extern "C" void on_shutdown_signal(int sig) {
  g_signal.store(sig);
  if (g_timeout_sec > 0) ::alarm(g_timeout_sec);  // async-signal-safe; SIGALRM's default ends the process
}

}  // namespace

ShutdownHandlers::ShutdownHandlers(double timeout_sec) {
  g_signal.store(0);
  g_timeout_sec = timeout_sec > 0 ? static_cast<unsigned>(timeout_sec + 0.5) : 0;
  struct sigaction action {};
  action.sa_handler = on_shutdown_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGUSR1, &action, nullptr);
  // Ctrl-C saves too; a second Ctrl-C (handler reset to the default) stops at once.
  action.sa_flags |= SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
}

ShutdownHandlers::~ShutdownHandlers() {
  ::alarm(0);
  std::signal(SIGTERM, SIG_DFL);
  std::signal(SIGUSR1, SIG_DFL);
  std::signal(SIGINT, SIG_DFL);
}

bool shutdown_requested() { return g_signal.load() != 0; }

int shutdown_signal() { return g_signal.load(); }

}  // namespace kforge::resilience
