// Entry point of libkforge_metrics.so: the console and jsonl metric backends.
#include "backends.h"

namespace {

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::metric_backend, "console", "0.1.0",
                     "one line per logging step on stdout: loss, lr, grad norm, tok/s, MFU, memory"),
    KFORGE_COMPONENT(kforge::sdk::kind::metric_backend, "jsonl", "0.2.0",
                     "appends every logged metric as JSON lines to <metrics.run_dir>/metrics.jsonl; a resumed "
                     "run first drops the lines of later steps"),
};

void register_components(kforge::sdk::Registrar& r) {
  r.add_metric_backend("console", kforge::builtin::metrics::make_console);
  r.add_metric_backend("jsonl", kforge::builtin::metrics::make_jsonl);
}

}  // namespace

KFORGE_PLUGIN("kforge-metrics", "0.1.0", "Built-in metric backends: console and JSON lines", kComponents,
              register_components)
