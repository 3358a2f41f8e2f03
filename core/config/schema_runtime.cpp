// The [distributed], [checkpoint], [metrics] and [profiling] sections of the schema.
#include "config/schema_keys.h"
#include "config/schema_sections.h"

namespace kforge::config::schema_parts {
namespace {

const SectionSpec& dyn_ckpt_window_schema() {
  static const SectionSpec window{"checkpoint.dyn_ckpt_window",
                                  {int_key("start", 0, "first step of the dense-checkpoint window"),
                                   int_key("stop", 512, "last step of the window"),
                                   string_key("strategy", "power2", "which steps inside the window save", {"power2"})}};
  return window;
}

}  // namespace

std::vector<SectionSpec> runtime_sections() {
  std::vector<SectionSpec> s;
  s.push_back(
      {"distributed",
       {int_key("dp_shard", -1, "FSDP degree (-1: the rest of the world size)"),
        int_key("dp_replicate", 1, "replicated data-parallel degree (HSDP)"),
        int_key("tp", 1, "tensor-parallel degree"), int_key("pp", 1, "pipeline-parallel degree"),
        string_key("pp_schedule", "1f1b",
                   "pipeline schedule plugin (pp > 1): \"gpipe\", \"1f1b\", \"interleaved_1f1b\" or a plugin's"),
        int_list_key("pp_layer_split", {},
                     "blocks per pipeline stage (pp x the schedule's chunks entries, in order; empty: even, earlier "
                     "stages take the remainder)"),
        int_key("cp", 1, "context-parallel degree"), int_key("ep", 1, "expert-parallel degree"),
        bounded(int_key("nccl_timeout_sec", 1800, "collective timeout in seconds (NCCL and Gloo)"), kMaxTimeoutSec),
        string_key("backend", "cpu:gloo,cuda:nccl", "process-group backends")},
       false,
       "process groups and the device mesh"});
  s.push_back({"checkpoint",
               {string_key("dir", "checkpoints", "directory of step_N checkpoints"),
                int_key("interval", 1000, "steps between checkpoints"),
                table_key("dyn_ckpt_window", &dyn_ckpt_window_schema(),
                          "dense checkpointing window ([checkpoint.dyn_ckpt_window])"),
                string_key("async_mode", "disabled", "background checkpoint writing",
                           {"disabled", "async", "async_with_pinned_mem"}),
                int_key("keep_last_n", 3, "checkpoints kept (<= 0: all); latest is never deleted"),
                optional_key(KeyType::String, "load_path", "checkpoint to start from when checkpoint.dir has none"),
                string_key("export_dtype", "bfloat16", "dtype of exported weights (kforge convert --to hf)",
                           {"float32", "bfloat16", "float16"}),
                string_list_key("exclude_from_loading", {}, "state not loaded on resume (\"model\", \"optimizer\")"),
                bool_key("ignore_freeze_mismatch", false, "warn instead of failing on a freeze-state mismatch")},
               false,
               "checkpoint saving, retention and resume"});
  s.push_back(
      {"metrics",
       {int_key("log_interval", 10, "steps between metric lines"),
        bool_key("enable_wandb", false,
                 "log to W&B (no W&B backend: true warns; log to TensorBoard and run wandb sync --sync-tensorboard)"),
        enabler_key("enable_tensorboard",
                    "log to TensorBoard: selects the metric backend enabled by this key, as if listed in backends"),
        string_key("wandb_project", "kempnerforge", "WandB project"),
        optional_key(KeyType::String, "wandb_run_name", "WandB run name"),
        string_key("wandb_run_id", "", "WandB run id (restored from checkpoints)"),
        string_key("tensorboard_dir", "tb_logs",
                   "TensorBoard event file directory (the tensorboard backend; relative: under metrics.run_dir)"),
        string_list_key("backends", {"console", "jsonl"}, "metric backend plugins"),
        string_key("run_dir", "", "directory for metric files (empty: checkpoint.dir)"),
        bool_key("per_rank", false,
                 "every rank logs its own metrics (step time, memory) to its backends, rank r > 0 under "
                 "<run_dir>/rank_<r>; false: rank 0 only"),
        float_key("peak_tflops", 0.0,
                  "peak TFLOP/s per rank for MFU (0: the CPU's theoretical peak, cores x FLOP/cycle x clock, "
                  "logged at start-up)")},
       false,
       "logging; backends picks the metric backend plugins"});
  s.push_back(
      {"profiling",
       {bool_key("enable", false, "write a trace of the chosen steps"), int_key("start_step", 5, "first profiled step"),
        int_key("end_step", 8, "step after the last profiled step"),
        string_key("trace_dir", "profiler_traces", "trace output directory")},
       false,
       "step profiler"});
  return s;
}

}  // namespace kforge::config::schema_parts
