// Registrar: the host-owned (kind, name) -> factory map a plugin's register_all fills.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kforge/sdk/adapter.h"
#include "kforge/sdk/config_view.h"
#include "kforge/sdk/dataset.h"
#include "kforge/sdk/expert_parallel.h"
#include "kforge/sdk/hook.h"
#include "kforge/sdk/image_text_dataset.h"
#include "kforge/sdk/kinds.h"
#include "kforge/sdk/logger.h"
#include "kforge/sdk/loss.h"
#include "kforge/sdk/metric_backend.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/optimizer.h"
#include "kforge/sdk/pipeline_schedule.h"
#include "kforge/sdk/router.h"
#include "kforge/sdk/scheduler.h"
#include "kforge/sdk/tensor_parallel.h"
#include "kforge/sdk/time_embedding.h"
#include "kforge/sdk/vision_encoder.h"
#include "kforge/sdk/vision_language_model.h"

namespace kforge::sdk {

/// Components a factory may build through the host (e.g. a model asking for its router).
class ComponentSource {
 public:
  virtual ~ComponentSource() = default;
  virtual std::shared_ptr<Router> make_router(const std::string& name, const RouterSpec& spec) const = 0;
};

/// What every factory receives: host services and the component's validated config section.
/// The references are valid only during the factory call: copy the values a component keeps.
struct BuildContext {
  Logger& log;
  const ConfigView& section;
  const ComponentSource& components;
  /// Where the run computes ([train] device: the CPU, or cuda:LOCAL_RANK). The host moves a model's parameters and
  /// buffers there after its factory returns and puts every batch there (datasets yield CPU tensors); a component
  /// makes the tensors it computes with on its inputs' device (e.g. with x.options()) and never assumes the CPU.
  c10::Device device = c10::Device(c10::DeviceType::CPU);
  /// [distributed] ep > 1: the expert-parallel group, valid as long as the component (a model that declares
  /// KFORGE_CAP_EXPERT_PARALLEL holds only its share of the experts and lists them in Model::expert_shards());
  /// null otherwise.
  const ExpertParallel* expert_parallel = nullptr;
  /// [distributed] tp > 1: the tensor-parallel group, valid as long as the component; null otherwise. A model that
  /// declares KFORGE_CAP_TENSOR_PARALLEL then holds its slices (Model::tensor_shards()) and returns its vocabulary
  /// slice of the logits; a loss that declares it reads such logits.
  const TensorParallel* tensor_parallel = nullptr;
  /// [train] mixed_precision = "fp8": a model that declares KFORGE_CAP_FLOAT8 computes its linear layers in float8
  /// (the rest of the step runs under bf16 autocast, as for "bf16"). False otherwise. Under FSDP the host gathers the
  /// parameter "weight" of every sub-module named "Float8Linear" (torch::nn::Module::name(), torchao's module) as
  /// e4m3 codes under a tensorwise scale, and the model holds code / scale while it is gathered: such a module must
  /// use that weight only as the weight operand of torchao's tensorwise cast (the weight rounded to bf16, scaled by
  /// 448 / its amax, rounded to e4m3), which gives back exactly the codes and scale of the whole weight.
  bool float8 = false;
};

using ModelFactory = std::function<std::shared_ptr<Model>(const BuildContext&)>;
using OptimizerFactory =
    std::function<std::unique_ptr<Optimizer>(const BuildContext&, std::vector<NamedParameter> params)>;
using SchedulerFactory = std::function<std::unique_ptr<Scheduler>(const BuildContext&, int64_t max_steps)>;
using LossFactory = std::function<std::unique_ptr<Loss>(const BuildContext&)>;
using RouterFactory = std::function<std::shared_ptr<Router>(const BuildContext&, const RouterSpec&)>;
using DatasetFactory = std::function<std::unique_ptr<Dataset>(const BuildContext&, const DatasetSpec&)>;
using HookFactory = std::function<std::unique_ptr<Hook>(const BuildContext&)>;
using MetricBackendFactory =
    std::function<std::unique_ptr<MetricBackend>(const BuildContext&, const RunInfo&)>;
using VisionEncoderFactory = std::function<std::shared_ptr<VisionEncoder>(const BuildContext&)>;
using AdapterFactory = std::function<std::shared_ptr<Adapter>(const BuildContext&, const AdapterSpec&)>;
using VisionLanguageModelFactory =
    std::function<std::shared_ptr<VisionLanguageModel>(const BuildContext&, VisionLanguageParts parts)>;
using ImageTextDatasetFactory =
    std::function<std::unique_ptr<ImageTextDataset>(const BuildContext&, const ImageTextSpec& spec)>;
using VideoDatasetFactory =
    std::function<std::unique_ptr<VideoDataset>(const BuildContext&, const ImageTextSpec& spec)>;
using FrameSamplerFactory = std::function<std::unique_ptr<FrameSampler>(const BuildContext&)>;
using TimeEmbeddingFactory =
    std::function<std::shared_ptr<TimeEmbedding>(const BuildContext&, const TimeEmbeddingSpec& spec)>;
using PipelineScheduleFactory = std::function<std::unique_ptr<PipelineSchedule>(const BuildContext&)>;

/// One add_<kind>(name, factory) per row of KFORGE_COMPONENT_KINDS: add_model, add_router,
/// add_optimizer, add_scheduler, add_loss, add_dataset, add_hook, add_metric_backend, add_vision_encoder,
/// add_adapter, add_modality_strategy, add_image_text_dataset, add_video_dataset, add_frame_sampler,
/// add_time_embedding, add_pipeline_schedule. Each throws
/// kforge::sdk::Error if the name is already taken or was not declared in the plugin's component
/// metadata.
class Registrar {
 public:
  virtual ~Registrar() = default;
#define KFORGE_DETAIL_ADD(id, Interface, section, selector, multiple) \
  virtual void add_##id(const std::string& name, Interface##Factory factory) = 0;
  KFORGE_COMPONENT_KINDS(KFORGE_DETAIL_ADD)
#undef KFORGE_DETAIL_ADD
};

}  // namespace kforge::sdk
