// Test helper: runs a kernel test at every vector width this CPU runs (4, 8 and 16 lanes on an
// AVX-512 machine), through the kernel family's own width getter and setter.
#pragma once

#include <gtest/gtest.h>
#include <kforge/sdk/error.h>

#include <string>

#include "vector_lanes.h"

namespace kforge::test {

/// Runs `body` once per width `set` accepts, then restores the width `get` reported.
template <class Body>
void at_every_width(builtin::lanes::Width (*get)(), void (*set)(builtin::lanes::Width), const Body& body) {
  using builtin::lanes::Width;
  const Width original = get();
  for (const Width width : {Width::Sse, Width::Avx2, Width::Avx512}) {
    try {
      set(width);
    } catch (const sdk::Error&) {
      continue;  // not on this CPU
    }
    SCOPED_TRACE(std::to_string(builtin::lanes::kLanesOf[static_cast<int>(width)]) + " lanes");
    body();
  }
  set(original);
}

}  // namespace kforge::test
