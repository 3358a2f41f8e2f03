// process_age_seconds: /proc/uptime minus the process's start time from /proc/PID/stat; start_up_seconds.
#include "metrics/process_age.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

#include "kforge/sdk/error.h"

namespace kforge::metrics {

double process_age_seconds(pid_t pid) {
  const std::string stat_path = pid == 0 ? "/proc/self/stat" : "/proc/" + std::to_string(pid) + "/stat";
  std::ifstream uptime_file("/proc/uptime"), stat_file(stat_path);
  double uptime = -1;
  uptime_file >> uptime;
  const std::string stat{std::istreambuf_iterator<char>(stat_file), std::istreambuf_iterator<char>()};
  // Field 2 (the command name) is in parentheses and may hold spaces: count fields after its closing one.
  const size_t name_end = stat.rfind(')');
  if (uptime < 0 || name_end == std::string::npos) {
    throw sdk::Error("cannot read /proc/uptime and " + stat_path + " to time a process's start-up");
  }
  std::istringstream fields(stat.substr(name_end + 1));
  std::string field;
  for (int i = 3; i < 22 && fields >> field; ++i) {
  }
  unsigned long long start_ticks = 0;  // field 22: clock ticks from boot to this process's creation
  if (!(fields >> start_ticks)) throw sdk::Error(stat_path + " has no start time (field 22)");
  return uptime - static_cast<double>(start_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double start_up_seconds() {
  const char* launcher = std::getenv("KFORGE_LAUNCHER_PID");
  const pid_t parent = ::getppid();
  return process_age_seconds(launcher != nullptr && std::to_string(parent) == launcher ? parent : 0);
}

}  // namespace kforge::metrics
