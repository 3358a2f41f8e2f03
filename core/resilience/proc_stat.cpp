// The fields of /proc/PID/stat (see proc_stat.h).
#include "resilience/proc_stat.h"

#include <fstream>
#include <iterator>
#include <sstream>

namespace kforge::resilience {

std::vector<std::string> proc_stat_fields(pid_t pid) {
  std::ifstream file(pid == 0 ? std::string("/proc/self/stat") : "/proc/" + std::to_string(pid) + "/stat");
  const std::string text{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  // The command name ends at the last ')': it may itself hold spaces and parentheses.
  const size_t open = text.find(" ("), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return {};
  std::vector<std::string> fields = {text.substr(0, open), text.substr(open + 1, close - open)};
  std::istringstream rest(text.substr(close + 1));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

}  // namespace kforge::resilience
