// Logger: the host's log sink as plugins see it (no spdlog objects cross the boundary).
#pragma once

#include <string_view>

namespace kforge::sdk {

class Logger {
 public:
  virtual ~Logger() = default;
  virtual void debug(std::string_view message) = 0;
  virtual void info(std::string_view message) = 0;
  virtual void warn(std::string_view message) = 0;
  virtual void error(std::string_view message) = 0;
};

}  // namespace kforge::sdk
