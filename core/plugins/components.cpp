#include "plugins/components.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"

namespace kforge::plugins {
namespace {

// Each component logs through its own prefix and reads its own section.
struct Context {
  log::PluginLogger logger;
  config::SectionView view;
  sdk::BuildContext ctx;
  Context(const std::string& kind, const std::string& name, const config::JobConfig& job, const std::string& section,
          const sdk::ComponentSource& source)
      : logger(kind + "/" + name), view(job.view(section)), ctx{logger, view, source} {}
};

}  // namespace

Components::Components(const plugins::Registry& registry, const config::JobConfig& job)
    : registry_(registry), job_(job) {}

template <class Factory>
const Factory& Components::factory(const char* kind, const std::string& name) const {
  const plugins::Entry* entry = registry_.find(kind, name);
  if (entry == nullptr) {
    throw sdk::ConfigError(fmt::format("no {} '{}' in the loaded plugins (check --plugin-dir)", kind, name));
  }
  return std::get<Factory>(entry->factory);
}

std::shared_ptr<sdk::Model> Components::model() const {
  const std::string name = job_.view("model").get_string("model_type");
  Context c(sdk::kind::model, name, job_, "model", *this);
  return factory<sdk::ModelFactory>(sdk::kind::model, name)(c.ctx);
}

std::unique_ptr<sdk::Optimizer> Components::optimizer(std::vector<sdk::NamedParameter> params) const {
  const std::string name = job_.view("optimizer").get_string("name");
  Context c(sdk::kind::optimizer, name, job_, "optimizer", *this);
  return factory<sdk::OptimizerFactory>(sdk::kind::optimizer, name)(c.ctx, std::move(params));
}

std::unique_ptr<sdk::Scheduler> Components::scheduler() const {
  const std::string name = job_.view("scheduler").get_string("name");
  Context c(sdk::kind::scheduler, name, job_, "scheduler", *this);
  return factory<sdk::SchedulerFactory>(sdk::kind::scheduler, name)(c.ctx, job_.train.max_steps);
}

std::unique_ptr<sdk::Loss> Components::loss() const {
  Context c(sdk::kind::loss, job_.train.loss_fn, job_, "train", *this);
  return factory<sdk::LossFactory>(sdk::kind::loss, job_.train.loss_fn)(c.ctx);
}

std::unique_ptr<sdk::Dataset> Components::dataset(const std::string& path, const std::string& file_pattern) const {
  Context c(sdk::kind::dataset, job_.data.dataset_type, job_, "data", *this);
  const sdk::DatasetSpec spec{path, file_pattern, job_.train.seq_len + 1};
  return factory<sdk::DatasetFactory>(sdk::kind::dataset, job_.data.dataset_type)(c.ctx, spec);
}

std::vector<std::unique_ptr<sdk::Hook>> Components::hooks() const {
  std::vector<std::unique_ptr<sdk::Hook>> out;
  for (const std::string& name : job_.train.hooks) {
    Context c(sdk::kind::hook, name, job_, "train", *this);
    out.push_back(factory<sdk::HookFactory>(sdk::kind::hook, name)(c.ctx));
  }
  return out;
}

std::vector<std::unique_ptr<sdk::MetricBackend>> Components::metric_backends(const sdk::RunInfo& run) const {
  std::vector<std::unique_ptr<sdk::MetricBackend>> out;
  for (const std::string& name : job_.metrics.backends) {
    Context c(sdk::kind::metric_backend, name, job_, "metrics", *this);
    out.push_back(factory<sdk::MetricBackendFactory>(sdk::kind::metric_backend, name)(c.ctx, run));
  }
  return out;
}

std::shared_ptr<sdk::Router> Components::make_router(const std::string& name, const sdk::RouterSpec& spec) const {
  Context c(sdk::kind::router, name, job_, "model", *this);
  return factory<sdk::RouterFactory>(sdk::kind::router, name)(c.ctx, spec);
}

}  // namespace kforge::plugins
