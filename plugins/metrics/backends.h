// The built-in metric backends: a console line, a JSON-lines file, TensorBoard event files and an
// MLflow file store.
#pragma once

#include <memory>

#include "kforge/sdk/sdk.h"

namespace kforge::builtin::metrics {

std::unique_ptr<sdk::MetricBackend> make_console(const sdk::BuildContext& ctx, const sdk::RunInfo& run);
std::unique_ptr<sdk::MetricBackend> make_jsonl(const sdk::BuildContext& ctx, const sdk::RunInfo& run);
std::unique_ptr<sdk::MetricBackend> make_tensorboard(const sdk::BuildContext& ctx, const sdk::RunInfo& run);
std::unique_ptr<sdk::MetricBackend> make_mlflow(const sdk::BuildContext& ctx, const sdk::RunInfo& run);

/// What the file-writing backends are on ranks other than 0 without [metrics] per_rank: nothing.
class NullBackend final : public sdk::MetricBackend {
 public:
  void log(int64_t, const sdk::MetricList&) override {}
};

}  // namespace kforge::builtin::metrics
