// Out-of-line destructors anchor the exported typeinfo of the SDK's exception types.
#include "kforge/sdk/error.h"

#include "kforge/sdk/hook.h"

namespace kforge::sdk {

Error::Error(const std::string& message) : std::runtime_error(message) {}
Error::~Error() = default;

ConfigError::ConfigError(const std::string& message) : Error(message) {}
ConfigError::~ConfigError() = default;

StopTraining::StopTraining(const std::string& reason) : Error(reason) {}
StopTraining::~StopTraining() = default;

}  // namespace kforge::sdk
