// state_key: which parameter an optimizer state entry "<param>.<suffix>" belongs to (parameter names hold dots too).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace kforge::checkpoint {

/// The longest prefix of `key` that ends before one of its dots and names a parameter (`is_param`), if any.
std::optional<std::string> state_owner(const std::string& key, const std::function<bool(const std::string&)>& is_param);

}  // namespace kforge::checkpoint
