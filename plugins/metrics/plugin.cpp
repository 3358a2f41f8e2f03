// Entry point of libkforge_metrics.so: the console, jsonl, tensorboard and mlflow metric backends.
#include "backends.h"

namespace {

using kforge::sdk::reads;

using kforge::sdk::config_keys;
using kforge::sdk::enabled_by;

constexpr kforge_config_key kTensorboardCoreKeys[] = {reads("tensorboard_dir")};
constexpr kforge_config_key kMlflowKeys[] = {
    {"mlflow_dir", "string", "\"mlruns\"",
     "MLflow file store the mlflow backend writes (relative: to the current directory, as MLflow's ./mlruns)"},
    {"mlflow_experiment", "string", "\"kforge\"", "MLflow experiment of the run (created when absent)"},
    {"mlflow_run_name", "string", "\"\"", "MLflow run name (empty: the name of metrics.run_dir)"},
};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::metric_backend, "console", "0.1.0",
                     "one line per logging step on stdout: loss, lr, grad norm, tok/s, MFU, memory"),
    KFORGE_COMPONENT(kforge::sdk::kind::metric_backend, "jsonl", "0.2.0",
                     "appends every logged metric as JSON lines to <metrics.run_dir>/metrics.jsonl; a resumed "
                     "run first drops the lines of later steps"),
    KFORGE_COMPONENT(kforge::sdk::kind::metric_backend, "tensorboard", "0.1.0",
                     "TensorBoard event files in tensorboard_dir (relative: under metrics.run_dir): every metric as "
                     "a scalar, the config as text; a resumed run continues them without repeated steps",
                     config_keys(kTensorboardCoreKeys), enabled_by("enable_tensorboard")),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::metric_backend, "mlflow", "0.1.0",
                               "an MLflow file store run (mlflow ui): config keys as params, metrics per step, "
                               "status at the end; a resumed run continues the same run",
                               kMlflowKeys),
};

void register_components(kforge::sdk::Registrar& r) {
  r.add_metric_backend("console", kforge::builtin::metrics::make_console);
  r.add_metric_backend("jsonl", kforge::builtin::metrics::make_jsonl);
  r.add_metric_backend("tensorboard", kforge::builtin::metrics::make_tensorboard);
  r.add_metric_backend("mlflow", kforge::builtin::metrics::make_mlflow);
}

}  // namespace

KFORGE_PLUGIN("kforge-metrics", "0.2.0", "Built-in metric backends: console, JSON lines, TensorBoard, MLflow",
              kComponents, register_components)
