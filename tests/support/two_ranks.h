// Ranks (two, or more) as threads of the test process, each with its own rendezvous client and Gloo
// process groups on 127.0.0.1 (a fresh port per call).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dist/runtime.h"

namespace kforge::test {

/// Runs body(runtime) on ranks 0 and 1 concurrently (one data-parallel mesh of 2); returns each
/// rank's exception message, "" where the body returned normally.
std::vector<std::string> on_two_ranks(const std::function<void(const dist::Runtime&)>& body);
/// The same on ranks 0 .. size - 1 (one data-parallel mesh of `size`).
std::vector<std::string> on_ranks(int size, const std::function<void(const dist::Runtime&)>& body);

}  // namespace kforge::test
