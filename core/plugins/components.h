// Components: builds each configured component through the registry with its config section.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "kforge/sdk/registrar.h"
#include "log/log.h"
#include "plugins/registry.h"

namespace kforge::plugins {

/// Each component is the one its kind's selector names ([optimizer] name, [train] hooks, ...; see
/// KFORGE_COMPONENT_KINDS), looked up with Registry::get (so a missing name gets "did you mean")
/// and built with a view of its kind's section.
class Components final : public sdk::ComponentSource {
 public:
  /// Both must outlive this object.
  Components(const plugins::Registry& registry, const config::JobConfig& job);

  /// The device every later factory is told (sdk::BuildContext::device); the CPU until set.
  void set_device(const c10::Device& device) { device_ = device; }
  /// The expert-parallel group every later factory is told (sdk::BuildContext::expert_parallel); must outlive the
  /// components built with it. Null (the default): none.
  void set_expert_parallel(const sdk::ExpertParallel* group) { expert_parallel_ = group; }
  /// The tensor-parallel group every later factory is told (sdk::BuildContext::tensor_parallel); as above.
  void set_tensor_parallel(const sdk::TensorParallel* group) { tensor_parallel_ = group; }

  std::shared_ptr<sdk::Model> model() const;
  std::unique_ptr<sdk::Optimizer> optimizer(std::vector<sdk::NamedParameter> params) const;
  /// Builds the configured optimizer over one 2x2 stand-in matrix, silently, so that it refuses bad
  /// [optimizer] values (sdk::ConfigError) without the model; other exceptions are dropped.
  void check_optimizer_values() const;
  std::unique_ptr<sdk::Scheduler> scheduler() const;
  std::unique_ptr<sdk::Loss> loss() const;
  /// The [distributed] pp_schedule (pipeline parallelism).
  std::unique_ptr<sdk::PipelineSchedule> pipeline_schedule() const;
  /// The configured dataset plugin over `path` (train or eval data); vocab_size > 0 makes it refuse ids at or past it
  /// as it opens ([model] vocab_size in a run; 0: no check).
  std::unique_ptr<sdk::Dataset> dataset(const std::string& path, const std::string& file_pattern,
                                        int64_t vocab_size) const;
  std::vector<std::unique_ptr<sdk::Hook>> hooks() const;
  /// The backends of [metrics] backends, in that order; each gets `run` with resumed_run_id set to
  /// its entry in `resumed_run_ids` (by backend name; absent: "").
  std::vector<std::unique_ptr<sdk::MetricBackend>> metric_backends(
      const sdk::RunInfo& run, const std::map<std::string, std::string>& resumed_run_ids = {}) const;
  std::shared_ptr<sdk::Router> make_router(const std::string& name, const sdk::RouterSpec& spec) const override;
  /// The [vision_encoder] type (a VLM's image tower).
  std::shared_ptr<sdk::VisionEncoder> vision_encoder() const;
  /// The [adapter] type between `spec`'s widths.
  std::shared_ptr<sdk::Adapter> adapter(const sdk::AdapterSpec& spec) const;
  /// The [vlm] arch composing `parts` (a vision-language run's model).
  std::shared_ptr<sdk::VisionLanguageModel> vision_language_model(sdk::VisionLanguageParts parts) const;
  /// The [vlm] dataset plugin serving `spec` (a vision-language run's training data).
  std::unique_ptr<sdk::ImageTextDataset> image_text_dataset(const sdk::ImageTextSpec& spec) const;
  /// The [video] dataset_type plugin serving `spec` (a video run's clips).
  std::unique_ptr<sdk::VideoDataset> video_dataset(const sdk::ImageTextSpec& spec) const;
  /// The [video] sampling_policy.
  std::unique_ptr<sdk::FrameSampler> frame_sampler() const;
  /// The [time_embedding] type for visual tokens `spec.dim` wide, or null when the config has no such section or
  /// type = "none".
  std::shared_ptr<sdk::TimeEmbedding> time_embedding(const sdk::TimeEmbeddingSpec& spec) const;

  /// The KFORGE_CAP_* flags the configured optimizer declares (e.g. KFORGE_CAP_NEEDS_WHOLE_MATRICES),
  /// without building it.
  uint32_t optimizer_capabilities() const;
  /// The KFORGE_CAP_* flags the configured model declares (e.g. KFORGE_CAP_DOCUMENT_MASK), without building it.
  uint32_t model_capabilities() const;
  /// The KFORGE_CAP_* flags the configured loss declares, without building it.
  uint32_t loss_capabilities() const;
  /// The KFORGE_CAP_* flags the configured [vlm] arch declares (e.g. KFORGE_CAP_TENSOR_PARALLEL: it passes the split
  /// on to the text model), without building it.
  uint32_t modality_strategy_capabilities() const;

 private:
  /// The registry entry of component `name` of `kind`.
  const Entry& entry(const sdk::KindInfo& kind, const std::string& name) const;
  /// The name the config selects for a kind that selects one.
  std::string selected(const sdk::KindInfo& kind) const;
  template <class Factory, class... Args>
  auto build(const sdk::KindInfo& kind, const std::string& name, Args&&... args) const;
  /// The component a kind that selects one names ([optimizer] name).
  template <class Factory, class... Args>
  auto build_selected(const char* kind, Args&&... args) const;
  /// The components, in config order, a kind that selects a list names ([train] hooks).
  template <class Factory, class... Args>
  auto build_each_selected(const char* kind, const Args&... args) const;

  const plugins::Registry& registry_;
  const config::JobConfig& job_;
  c10::Device device_ = c10::Device(c10::DeviceType::CPU);
  const sdk::ExpertParallel* expert_parallel_ = nullptr;
  const sdk::TensorParallel* tensor_parallel_ = nullptr;
};

}  // namespace kforge::plugins
