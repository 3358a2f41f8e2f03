// Exception types that may cross the plugin boundary (exported so typeinfo is shared).
#pragma once

#include <stdexcept>
#include <string>

#include "kforge/sdk/export.h"

namespace kforge::sdk {

/// Any error a user can act on: the message names the thing at fault and what is allowed.
class KFORGE_SDK_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message);
  ~Error() override;
};

/// A configuration value is missing, of the wrong type or out of range.
class KFORGE_SDK_API ConfigError : public Error {
 public:
  explicit ConfigError(const std::string& message);
  ~ConfigError() override;
};

}  // namespace kforge::sdk
