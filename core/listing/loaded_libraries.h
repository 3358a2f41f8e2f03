// The shared libraries this process has loaded (LibTorch, the SDK, plugins, ...): inputs of a
// list-plugins listing that the listing cache fingerprints.
#pragma once

#include <string>
#include <vector>

namespace kforge::listing {

/// The path of every shared object the dynamic loader has mapped, as it found them (absolute),
/// in load order; the executable itself and the vDSO are not included.
std::vector<std::string> loaded_libraries();

}  // namespace kforge::listing
