// state_key: the parameter an optimizer state key belongs to.
#include "checkpoint/state_key.h"

namespace kforge::checkpoint {

std::optional<std::string> state_owner(const std::string& key, const std::function<bool(const std::string&)>& is_param) {
  for (size_t dot = key.rfind('.'); dot != std::string::npos && dot > 0; dot = key.rfind('.', dot - 1)) {
    std::string name = key.substr(0, dot);
    if (is_param(name)) return name;
  }
  return std::nullopt;
}

}  // namespace kforge::checkpoint
