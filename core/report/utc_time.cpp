// Wall-clock times as the report shows them (see utc_time.h).
#include "report/utc_time.h"

#include <cmath>
#include <ctime>

namespace kforge::report {

std::string utc_time(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace kforge::report
