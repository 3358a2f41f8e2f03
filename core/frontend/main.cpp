// kforge: the front-end, which never loads LibTorch. It answers help, a missing or unknown command
// (cmdline/usage.h) and a repeated `list-plugins` from the listing cache itself, and hands every other command
// line, unchanged, to kforge-host by execv, with huge pages for its heap (launch/heap_huge_pages.h) and OpenBLAS's
// kernels for this CPU where OpenBLAS does not know it (launch/openblas_kernels.h). `kforge
// launch` runs in kforge-host too: its workers are forks of it, so they share its one load of LibTorch.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cmdline/process_exit_codes.h"
#include "cmdline/usage.h"
#include "launch/heap_huge_pages.h"
#include "launch/openblas_kernels.h"
#include "listing/listing_cache.h"
#include "resilience/fault_point.h"

namespace {

// The listing stored for this exact command line, if it is still valid.
bool print_cached_listing(int argc, char** argv, const std::filesystem::path& host) {
  if (argc < 2 || std::strcmp(argv[1], "list-plugins") != 0 || kforge::listing::disabled()) return false;
  std::error_code ec;
  const std::filesystem::path canonical_host = std::filesystem::canonical(host, ec);
  if (ec) return false;
  const auto output = kforge::listing::lookup(canonical_host, std::vector<std::string>(argv + 2, argv + argc));
  if (!output) return false;
  std::fwrite(output->data(), 1, output->size(), stdout);
  return true;
}

// SIGTERM, SIGUSR1 and SIGINT blocked while alive; the mask before it restored at its end.
class ShutdownSignalsHeld {
 public:
  ShutdownSignalsHeld() {
    sigset_t shutdown_signals;
    sigemptyset(&shutdown_signals);
    for (int sig : {SIGTERM, SIGUSR1, SIGINT}) sigaddset(&shutdown_signals, sig);
    ::sigprocmask(SIG_BLOCK, &shutdown_signals, &before_);
  }
  ~ShutdownSignalsHeld() { ::sigprocmask(SIG_SETMASK, &before_, nullptr); }
  ShutdownSignalsHeld(const ShutdownSignalsHeld&) = delete;
  ShutdownSignalsHeld& operator=(const ShutdownSignalsHeld&) = delete;

 private:
  sigset_t before_;
};

}  // namespace

int main(int argc, char** argv) {
  using kforge::cmdline::kExitOk, kforge::cmdline::kExitUsage;
  // First of all, and held across exec until kforge-host has its handlers (resilience/shutdown.h): a SIGTERM while
  // this process or LibTorch loads then asks `kforge run` to stop instead of killing it with code 143. Given back
  // (a pending one then acts) on every return: only a successful exec keeps it.
  const ShutdownSignalsHeld held;
  try {
    kforge::resilience::fault_point("frontend.start");  // the fault suite's earliest moment (tests/core/cli)
  } catch (const std::invalid_argument& e) {  // a malformed KFORGE_FAULT, before any thread could meet it
    std::fprintf(stderr, "kforge: %s\n", e.what());
    return kExitUsage;
  }
  if (const std::optional<int> code = kforge::cmdline::answer_from_usage(argc, argv)) return *code;
  kforge::launch::ask_children_for_heap_huge_pages();  // for kforge-host (and launch's workers, its forks)
  const std::filesystem::path exe = kforge::listing::current_executable();
  if (exe.empty()) {
    std::fprintf(stderr, "kforge: cannot read /proc/self/exe to find kforge-host next to this executable.\n");
    return kExitUsage;
  }
  const std::filesystem::path host = exe.parent_path() / "kforge-host";
  if (print_cached_listing(argc, argv, host)) return kExitOk;
  kforge::launch::ask_children_for_the_cpus_openblas_kernels();  // before kforge-host loads OpenBLAS
  ::execv(host.c_str(), argv);
  std::fprintf(stderr, "kforge: cannot run the kforge host '%s': %s. kforge-host must be installed next to kforge.\n",
               host.c_str(), std::strerror(errno));
  return kExitUsage;
}
