// Scheduler: the learning-rate factor as a pure function of the step (LambdaLR semantics).
#pragma once

#include <cstdint>

namespace kforge::sdk {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  /// Factor of the base learning rate for optimizer step `step` (the first step is 0).
  virtual double factor(int64_t step) const = 0;
};

}  // namespace kforge::sdk
