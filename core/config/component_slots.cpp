// Component slots: the config section and selector key of each component kind.
#include "config/component_slots.h"

namespace kforge::config {

const std::vector<ComponentSlot>& component_slots() {
  static const std::vector<ComponentSlot> slots = {
      {"model", "model", "model_type", false},   {"router", "model", "moe_router", false},
      {"optimizer", "optimizer", "name", false}, {"scheduler", "scheduler", "name", false},
      {"loss", "train", "loss_fn", false},       {"dataset", "data", "dataset_type", false},
      {"hook", "train", "hooks", true},          {"metric_backend", "metrics", "backends", true},
  };
  return slots;
}

}  // namespace kforge::config
