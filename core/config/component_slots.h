// Component slots: where each component kind is selected in the config and where its own keys live.
#pragma once

#include <vector>

namespace kforge::config {

/// Where a component kind is selected in the config and where its own keys live.
struct ComponentSlot {
  const char* kind;
  const char* section;
  const char* selector;  ///< key naming the component(s)
  bool multiple;         ///< the selector is a list of names
};

const std::vector<ComponentSlot>& component_slots();

}  // namespace kforge::config
