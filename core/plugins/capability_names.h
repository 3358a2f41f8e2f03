// capability_names: the KFORGE_CAP_* flags of a component as words, for listings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kforge::plugins {

/// One name per set flag, in bit order: "needs_whole_matrices", "has_eval_weights"; a flag this
/// host does not know shows as its hex value.
std::vector<std::string> capability_names(uint32_t flags);

}  // namespace kforge::plugins
