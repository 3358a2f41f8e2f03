// Stated and measured core clocks (see cpu_clock.h).
#include "env/cpu_clock.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>

namespace kforge::env {

CpuClock choose_clock(double sysfs_max_ghz, double cpuinfo_ghz, double measured_ghz) {
  const bool from_sysfs = sysfs_max_ghz > 0;
  const double stated = from_sysfs ? sysfs_max_ghz : cpuinfo_ghz;
  const std::string stated_source = from_sysfs ? "cpuinfo_max_freq" : "/proc/cpuinfo cpu MHz";
  if (measured_ghz > stated) {
    return {measured_ghz, stated > 0 ? fmt::format("measured; {} says {:.2f} GHz", stated_source, stated)
                                     : "measured; no stated clock in sysfs or /proc/cpuinfo"};
  }
  return {stated, stated_source};
}

double sysfs_max_ghz() {
  double khz = 0;
  std::ifstream("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") >> khz;
  return khz / 1e6;
}

double cpuinfo_ghz() {
  std::ifstream in("/proc/cpuinfo");
  double best_mhz = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon != std::string::npos) best_mhz = std::max(best_mhz, std::stod(line.substr(colon + 1)));
  }
  return best_mhz / 1e3;
}

double measured_ghz() {
#if defined(__x86_64__)
  constexpr int64_t kBlocks = 10000, kAddsPerBlock = 100;  // 1e6 cycles: ~0.3 ms at 3.5 GHz
  uint64_t x = 0;
  const uint64_t one = 1;
  double best = 0;
  for (int run = 0; run < 100; ++run) {  // the first runs also ramp the core's clock up
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t b = 0; b < kBlocks; ++b) {
      // A register (not an immediate) operand: no core folds these adds away at rename.
      asm volatile(".rept 100\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(kBlocks * kAddsPerBlock) / seconds / 1e9);
  }
  return best;
#else
  return 0;
#endif
}

CpuClock cpu_clock() { return choose_clock(sysfs_max_ghz(), cpuinfo_ghz(), measured_ghz()); }

}  // namespace kforge::env
