// DataError: the training or eval data cannot be used as configured (a shard that does not parse, a token id at or
// past [model] vocab_size); `kforge run` refuses it before any step with exit code 2, as it does a config error.
#pragma once

#include <string>

#include "kforge/sdk/error.h"

namespace kforge::data {

class DataError : public sdk::Error {
 public:
  explicit DataError(const std::string& message) : sdk::Error(message) {}
};

}  // namespace kforge::data
