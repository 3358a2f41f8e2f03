// The core clock the FMA peak is computed at: the stated maximum, or the measured clock when the
// cores are seen running faster than stated (a VM's /proc/cpuinfo shows the base clock, not boost).
#pragma once

#include <string>

namespace kforge::env {

struct CpuClock {
  double ghz = 0;
  std::string source;  ///< how ghz was found, for the log: "cpuinfo_max_freq", "measured ...", ...
};

/// The higher of the stated clock (sysfs cpuinfo_max_freq, else /proc/cpuinfo "cpu MHz"; 0 when
/// unknown) and the measured one (0 when not measured), with where it came from.
CpuClock choose_clock(double sysfs_max_ghz, double cpuinfo_ghz, double measured_ghz);

/// /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq in GHz (0 when absent).
double sysfs_max_ghz();
/// The highest "cpu MHz" in /proc/cpuinfo, in GHz (0 when absent).
double cpuinfo_ghz();
/// The clock of the calling thread's core: a chain of dependent register adds (one per cycle on
/// every x86 core) timed against the steady clock, best of ~100 runs of 0.3 ms; 0 off x86.
double measured_ghz();

/// choose_clock(sysfs_max_ghz(), cpuinfo_ghz(), measured_ghz()).
CpuClock cpu_clock();

}  // namespace kforge::env
