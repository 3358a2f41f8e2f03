// process_age_seconds: /proc/uptime minus the process's start time from /proc/PID/stat; start_up_seconds.
#include "metrics/process_age.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kforge/sdk/error.h"
#include "resilience/proc_stat.h"

namespace kforge::metrics {

double process_age_seconds(pid_t pid) {
  const std::string stat_path = pid == 0 ? "/proc/self/stat" : "/proc/" + std::to_string(pid) + "/stat";
  std::ifstream uptime_file("/proc/uptime");
  double uptime = -1;
  uptime_file >> uptime;
  const std::vector<std::string> stat = resilience::proc_stat_fields(pid);
  if (uptime < 0 || stat.empty()) {
    throw sdk::Error("cannot read /proc/uptime and " + stat_path + " to time a process's start-up");
  }
  if (stat.size() < 22) throw sdk::Error(stat_path + " has no start time (field 22)");
  const unsigned long long start_ticks = std::stoull(stat[21]);  // clock ticks from boot to the process's creation
  return uptime - static_cast<double>(start_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double start_up_seconds() {
  const char* launcher = std::getenv("KFORGE_LAUNCHER_PID");
  const pid_t parent = ::getppid();
  return process_age_seconds(launcher != nullptr && std::to_string(parent) == launcher ? parent : 0);
}

}  // namespace kforge::metrics
