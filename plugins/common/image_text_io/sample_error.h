// SampleError: one sample cannot be used (a corrupt or missing image, a truncated shard member); the decode
// pool skips it with a warning naming where it came from, where any other error stops the data path.
#pragma once

#include <string>

#include "kforge/sdk/error.h"

namespace kforge::image_text {

class SampleError : public sdk::Error {
 public:
  explicit SampleError(const std::string& message) : sdk::Error(message) {}
};

}  // namespace kforge::image_text
