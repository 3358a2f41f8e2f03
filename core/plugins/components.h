// Components: builds each configured component through the registry with its config section.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "kforge/sdk/registrar.h"
#include "log/log.h"
#include "plugins/registry.h"

namespace kforge::plugins {

class Components final : public sdk::ComponentSource {
 public:
  /// Both must outlive this object.
  Components(const plugins::Registry& registry, const config::JobConfig& job);

  std::shared_ptr<sdk::Model> model() const;
  std::unique_ptr<sdk::Optimizer> optimizer(std::vector<sdk::NamedParameter> params) const;
  std::unique_ptr<sdk::Scheduler> scheduler() const;
  std::unique_ptr<sdk::Loss> loss() const;
  /// The configured dataset plugin over `path` (train or eval data).
  std::unique_ptr<sdk::Dataset> dataset(const std::string& path, const std::string& file_pattern) const;
  std::vector<std::unique_ptr<sdk::Hook>> hooks() const;
  std::vector<std::unique_ptr<sdk::MetricBackend>> metric_backends(const sdk::RunInfo& run) const;
  std::shared_ptr<sdk::Router> make_router(const std::string& name, const sdk::RouterSpec& spec) const override;

 private:
  template <class Factory>
  const Factory& factory(const char* kind, const std::string& name) const;

  const plugins::Registry& registry_;
  const config::JobConfig& job_;
};

}  // namespace kforge::plugins
