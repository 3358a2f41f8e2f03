// The sixteen component kinds in one table: what each is called, where a config selects it and whose keys it reads.
#pragma once

#include <string_view>

/// X(id, Interface, section, selector, multiple), once per kind, in config order. `id` is the kind
/// string of plugin metadata and the suffix of Registrar::add_<id>; `Interface` the kforge::sdk
/// class its factory (Interface##Factory) builds; `section` the config section whose keys the
/// component reads and where the key `selector` names it (a list of names when `multiple`).
/// Everything in kforge that spells a kind expands this list.
#define KFORGE_COMPONENT_KINDS(X)                                   \
  X(model, Model, "model", "model_type", false)                     \
  X(router, Router, "model", "moe_router", false)                   \
  X(optimizer, Optimizer, "optimizer", "name", false)               \
  X(scheduler, Scheduler, "scheduler", "name", false)               \
  X(loss, Loss, "train", "loss_fn", false)                          \
  X(dataset, Dataset, "data", "dataset_type", false)                \
  X(hook, Hook, "train", "hooks", true)                             \
  X(metric_backend, MetricBackend, "metrics", "backends", true)     \
  X(vision_encoder, VisionEncoder, "vision_encoder", "type", false) \
  X(adapter, Adapter, "adapter", "type", false)                     \
  X(modality_strategy, VisionLanguageModel, "vlm", "arch", false)   \
  X(image_text_dataset, ImageTextDataset, "vlm", "dataset", false)  \
  X(video_dataset, VideoDataset, "video", "dataset_type", false)    \
  X(frame_sampler, FrameSampler, "video", "sampling_policy", false) \
  X(time_embedding, TimeEmbedding, "time_embedding", "type", false) \
  X(pipeline_schedule, PipelineSchedule, "distributed", "pp_schedule", false)

namespace kforge::sdk {

/// One row of KFORGE_COMPONENT_KINDS.
struct KindInfo {
  const char* name;      ///< e.g. "optimizer"
  const char* section;   ///< e.g. "optimizer"
  const char* selector;  ///< e.g. "name"
  bool multiple;         ///< the selector is a list of names
};

#define KFORGE_DETAIL_KIND_INFO(id, Interface, section, selector, multiple) KindInfo{#id, section, selector, multiple},
/// Every kind, in KFORGE_COMPONENT_KINDS order.
inline constexpr KindInfo kKinds[] = {KFORGE_COMPONENT_KINDS(KFORGE_DETAIL_KIND_INFO)};
#undef KFORGE_DETAIL_KIND_INFO

/// The kind called `name`, or nullptr.
constexpr const KindInfo* find_kind(std::string_view name) {
  for (const KindInfo& k : kKinds) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

/// The kind strings, e.g. kind::optimizer == "optimizer".
namespace kind {
#define KFORGE_DETAIL_KIND_NAME(id, Interface, section, selector, multiple) inline constexpr const char* id = #id;
KFORGE_COMPONENT_KINDS(KFORGE_DETAIL_KIND_NAME)
#undef KFORGE_DETAIL_KIND_NAME
}  // namespace kind

}  // namespace kforge::sdk
