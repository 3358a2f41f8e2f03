// The built-in metric backends: a console line and a JSON-lines file.
#pragma once

#include <memory>

#include "kforge/sdk/sdk.h"

namespace kforge::builtin::metrics {

std::unique_ptr<sdk::MetricBackend> make_console(const sdk::BuildContext& ctx, const sdk::RunInfo& run);
std::unique_ptr<sdk::MetricBackend> make_jsonl(const sdk::BuildContext& ctx, const sdk::RunInfo& run);

}  // namespace kforge::builtin::metrics
