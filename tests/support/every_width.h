// Test helper: runs a kernel test at every vector width this CPU runs (4, 8 and 16 lanes on an
// AVX-512 machine), through the kernel family's own width getter and setter.
#pragma once

#include <gtest/gtest.h>
#include <kforge/sdk/error.h>

#include <cstdio>
#include <string>

#include "vector_lanes.h"

namespace kforge::test {

/// Runs `body` once per width `set` accepts, then restores the width `get` reported. Prints the
/// widths that ran (and records them as the test's "widths" property), so a reader of the output
/// knows which kernels this CPU covered: an AVX2-only CPU cannot run the 16-lane ones.
template <class Body>
void at_every_width(builtin::lanes::Width (*get)(), void (*set)(builtin::lanes::Width), const Body& body) {
  using builtin::lanes::Width;
  const Width original = get();
  std::string ran, skipped;
  for (const Width width : {Width::Sse, Width::Avx2, Width::Avx512}) {
    const std::string lanes = std::to_string(builtin::lanes::kLanesOf[static_cast<int>(width)]);
    try {
      set(width);
    } catch (const sdk::Error&) {
      skipped += (skipped.empty() ? "" : ", ") + lanes;
      continue;  // not on this CPU
    }
    ran += (ran.empty() ? "" : ", ") + lanes;
    SCOPED_TRACE(lanes + " lanes");
    body();
  }
  set(original);
  std::printf("[ widths   ] ran %s lanes%s\n", ran.c_str(),
              skipped.empty() ? "" : ("; not on this CPU: " + skipped + " lanes").c_str());
  ::testing::Test::RecordProperty("widths", ran);
}

}  // namespace kforge::test
