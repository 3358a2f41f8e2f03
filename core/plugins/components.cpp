// Components: each configured component, looked up in the registry and built with its kind's section.
#include "plugins/components.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "kforge/sdk/kinds.h"

namespace kforge::plugins {
namespace {

// Each component logs through its own prefix and reads its kind's section.
struct Context {
  log::PluginLogger logger;
  config::SectionView view;
  sdk::BuildContext ctx;
  Context(const sdk::KindInfo& kind, const std::string& name, const config::JobConfig& job,
          const sdk::ComponentSource& source, const c10::Device& device, const sdk::ExpertParallel* expert_parallel,
          const sdk::TensorParallel* tensor_parallel)
      : logger(std::string(kind.name) + "/" + name),
        view(job.view(kind.section)),
        ctx{logger, view, source, device, expert_parallel, tensor_parallel, job.train.mixed_precision == "fp8"} {}
};

const sdk::KindInfo& kind_info(const char* kind) { return *sdk::find_kind(kind); }

// Drops every message: for a component built only so that it checks its config values.
class SilentLogger final : public sdk::Logger {
 public:
  void debug(std::string_view) override {}
  void info(std::string_view) override {}
  void warn(std::string_view) override {}
  void error(std::string_view) override {}
};

}  // namespace

Components::Components(const plugins::Registry& registry, const config::JobConfig& job)
    : registry_(registry), job_(job) {}

const Entry& Components::entry(const sdk::KindInfo& kind, const std::string& name) const {
  return registry_.get(kind.name, name, fmt::format("[{}] {}", kind.section, kind.selector));
}

std::string Components::selected(const sdk::KindInfo& kind) const {
  return job_.view(kind.section).get_string(kind.selector);
}

template <class Factory, class... Args>
auto Components::build(const sdk::KindInfo& kind, const std::string& name, Args&&... args) const {
  const Factory& factory = std::get<Factory>(entry(kind, name).factory);
  Context c(kind, name, job_, *this, device_, expert_parallel_, tensor_parallel_);
  return factory(c.ctx, std::forward<Args>(args)...);
}

template <class Factory, class... Args>
auto Components::build_selected(const char* kind, Args&&... args) const {
  const sdk::KindInfo& info = kind_info(kind);
  return build<Factory>(info, selected(info), std::forward<Args>(args)...);
}

template <class Factory, class... Args>
auto Components::build_each_selected(const char* kind, const Args&... args) const {
  const sdk::KindInfo& info = kind_info(kind);
  std::vector<decltype(build<Factory>(info, std::string(), args...))> out;
  for (const std::string& name : job_.view(info.section).get_string_list(info.selector)) {
    out.push_back(build<Factory>(info, name, args...));
  }
  return out;
}

std::shared_ptr<sdk::Model> Components::model() const { return build_selected<sdk::ModelFactory>(sdk::kind::model); }

std::unique_ptr<sdk::Optimizer> Components::optimizer(std::vector<sdk::NamedParameter> params) const {
  return build_selected<sdk::OptimizerFactory>(sdk::kind::optimizer, std::move(params));
}

void Components::check_optimizer_values() const {
  const sdk::KindInfo& info = kind_info(sdk::kind::optimizer);
  const auto& factory = std::get<sdk::OptimizerFactory>(entry(info, selected(info)).factory);
  SilentLogger silent;
  const config::SectionView view = job_.view(info.section);
  const sdk::BuildContext ctx{silent, view, *this};
  std::vector<sdk::NamedParameter> stand_in{{"stand_in.weight", at::zeros({2, 2}).requires_grad_()}};
  try {
    factory(ctx, std::move(stand_in));
  } catch (const sdk::ConfigError&) {
    throw;
  } catch (const std::exception&) {
    // The optimizer refused the stand-in itself, which says nothing about the config.
  }
}

std::unique_ptr<sdk::Scheduler> Components::scheduler() const {
  return build_selected<sdk::SchedulerFactory>(sdk::kind::scheduler, job_.train.max_steps);
}

std::unique_ptr<sdk::Loss> Components::loss() const { return build_selected<sdk::LossFactory>(sdk::kind::loss); }

std::unique_ptr<sdk::PipelineSchedule> Components::pipeline_schedule() const {
  return build_selected<sdk::PipelineScheduleFactory>(sdk::kind::pipeline_schedule);
}

std::unique_ptr<sdk::Dataset> Components::dataset(const std::string& path, const std::string& file_pattern,
                                                 int64_t vocab_size) const {
  return build_selected<sdk::DatasetFactory>(sdk::kind::dataset,
                                             sdk::DatasetSpec{path, file_pattern, job_.train.seq_len + 1, vocab_size});
}

std::vector<std::unique_ptr<sdk::Hook>> Components::hooks() const {
  return build_each_selected<sdk::HookFactory>(sdk::kind::hook);
}

std::vector<std::unique_ptr<sdk::MetricBackend>> Components::metric_backends(
    const sdk::RunInfo& run, const std::map<std::string, std::string>& resumed_run_ids) const {
  const sdk::KindInfo& info = kind_info(sdk::kind::metric_backend);
  std::vector<std::unique_ptr<sdk::MetricBackend>> out;
  for (const std::string& name : job_.view(info.section).get_string_list(info.selector)) {
    sdk::RunInfo mine = run;
    const auto id = resumed_run_ids.find(name);
    mine.resumed_run_id = id != resumed_run_ids.end() ? id->second : "";
    out.push_back(build<sdk::MetricBackendFactory>(info, name, mine));
  }
  return out;
}

std::shared_ptr<sdk::Router> Components::make_router(const std::string& name, const sdk::RouterSpec& spec) const {
  return build<sdk::RouterFactory>(kind_info(sdk::kind::router), name, spec);
}

std::shared_ptr<sdk::VisionEncoder> Components::vision_encoder() const {
  return build_selected<sdk::VisionEncoderFactory>(sdk::kind::vision_encoder);
}

std::shared_ptr<sdk::Adapter> Components::adapter(const sdk::AdapterSpec& spec) const {
  return build_selected<sdk::AdapterFactory>(sdk::kind::adapter, spec);
}

std::shared_ptr<sdk::VisionLanguageModel> Components::vision_language_model(sdk::VisionLanguageParts parts) const {
  const config::SectionView text_config = job_.view(kind_info(sdk::kind::model).section);
  parts.text_config = &text_config;
  return build_selected<sdk::VisionLanguageModelFactory>(sdk::kind::modality_strategy, std::move(parts));
}

std::unique_ptr<sdk::ImageTextDataset> Components::image_text_dataset(const sdk::ImageTextSpec& spec) const {
  return build_selected<sdk::ImageTextDatasetFactory>(sdk::kind::image_text_dataset, spec);
}

std::unique_ptr<sdk::VideoDataset> Components::video_dataset(const sdk::ImageTextSpec& spec) const {
  return build_selected<sdk::VideoDatasetFactory>(sdk::kind::video_dataset, spec);
}

std::unique_ptr<sdk::FrameSampler> Components::frame_sampler() const {
  return build_selected<sdk::FrameSamplerFactory>(sdk::kind::frame_sampler);
}

std::shared_ptr<sdk::TimeEmbedding> Components::time_embedding(const sdk::TimeEmbeddingSpec& spec) const {
  const sdk::KindInfo& info = kind_info(sdk::kind::time_embedding);
  if (job_.tree.find(info.section) == nullptr || selected(info) == "none") return nullptr;
  return build<sdk::TimeEmbeddingFactory>(info, selected(info), spec);
}

uint32_t Components::optimizer_capabilities() const {
  const sdk::KindInfo& optimizer = kind_info(sdk::kind::optimizer);
  return entry(optimizer, selected(optimizer)).meta.capabilities;
}

uint32_t Components::loss_capabilities() const {
  const sdk::KindInfo& loss = kind_info(sdk::kind::loss);
  return entry(loss, selected(loss)).meta.capabilities;
}

uint32_t Components::model_capabilities() const {
  const sdk::KindInfo& model = kind_info(sdk::kind::model);
  return entry(model, selected(model)).meta.capabilities;
}

uint32_t Components::modality_strategy_capabilities() const {
  const sdk::KindInfo& strategy = kind_info(sdk::kind::modality_strategy);
  return entry(strategy, selected(strategy)).meta.capabilities;
}

}  // namespace kforge::plugins
