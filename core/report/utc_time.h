// Wall-clock times of the run record as the report shows them.
#pragma once

#include <string>

namespace kforge::report {

/// "2024-05-01 12:00:00 UTC" for seconds since the epoch; "?" when not finite.
std::string utc_time(double seconds);

}  // namespace kforge::report
