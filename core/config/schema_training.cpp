// The [train], [optimizer] and [scheduler] sections of the schema, and the freeze directives they share with [vlm].
#include "config/schema_keys.h"
#include "config/schema_sections.h"

namespace kforge::config::schema_parts {

const SectionSpec& freeze_spec_schema() {
  static const SectionSpec spec{
      "freeze",
      {required_key(KeyType::String, "module",
                    "an fnmatch pattern over full parameter names (e.g. \"layers.0.*\"), or with "
                    "[vlm] an alias of vlm.module_patterns; a pattern matching no parameter is an error"),
       bool_key("frozen", true, "freeze (true) or unfreeze (false) the matched parameters")}};
  return spec;
}

const SectionSpec& freeze_stage_schema() {
  static const SectionSpec stage{"freeze_schedule",
                                 {required_key(KeyType::Int, "start_step", "step from which this stage's specs apply"),
                                  table_list_key("specs", &freeze_spec_schema(), "freeze directives of this stage")}};
  return stage;
}

std::vector<SectionSpec> training_sections() {
  std::vector<SectionSpec> s;
  s.push_back(
      {"train",
       {int_key("batch_size", 8, "per-rank micro-batch size"),
        int_key("seq_len", 2048, "training sequence length"),
        int_key("max_steps", 100000, "optimizer steps to train"),
        int_key("grad_accum_steps", 1, "micro-batches per optimizer step"),
        float_key("grad_clip_norm", 1.0, "global gradient-norm clip (> 0)"),
        int_key("seed", 42, "seed of initialisation and, unless data_seed, data order"),
        optional_key(KeyType::Int, "data_seed", "seed of the data order (unset: seed)"),
        bool_key("compile_model", true,
                 "whole-model graph compilation (not in kforge: true warns that it has no effect)"),
        string_key("mixed_precision", "bf16", "parameter/compute precision", {"bf16", "fp16", "fp32", "fp8"}),
        float_key("loss_scale_init", 65536.0, "fp16: the dynamic loss scale's initial value (GradScaler's init_scale)"),
        float_key("loss_scale_growth", 2.0, "fp16: the factor growing the scale after growth_interval clean steps"),
        float_key("loss_scale_backoff", 0.5,
                  "fp16: the factor shrinking the scale on a non-finite gradient (that step is skipped)"),
        int_key("loss_scale_growth_interval", 2000, "fp16: clean steps in a row before the scale grows"),
        string_key("activation_checkpointing", "none", "activation checkpointing", {"none", "full", "selective"}),
        string_key("loss_fn", "cross_entropy", "loss plugin"),
        float_key("z_loss_weight", 0.0, "PaLM logit z-loss weight"),
        int_key("ce_chunk_size", 0, "chunked cross-entropy chunk (0: 4096)"),
        bounded(float_key("shutdown_timeout_sec", 600.0, "forced exit this long after a shutdown signal (0: never)"),
                kMaxTimeoutSec),
        int_key("nccl_health_check_interval", 0,
                "steps between health checks: every rank hears from every other within "
                "nccl_health_check_timeout_sec, or the job ends naming the rank that did not answer (0: off)"),
        bounded(float_key("nccl_health_check_timeout_sec", 10.0,
                          "a health check's deadline (> 0; KempnerForge's check_nccl_health default)"),
                kMaxTimeoutSec),
        bounded(int_key("num_threads", 0, "intra-op CPU threads (0: all cores)"), kMaxThreads),
        string_key("device", "auto",
                   "where the model, optimizer state, batches and collectives live: \"auto\" (cuda:LOCAL_RANK in a "
                   "CUDA build with a GPU, else the CPU), \"cpu\" or \"cuda\"",
                   {"auto", "cpu", "cuda"}),
        int_key("nan_max_consecutive", 10, "stop after this many consecutive NaN/Inf losses (each is skipped)"),
        string_list_key("hooks", {}, "hook plugins to run, in order"),
        table_list_key("freeze", &freeze_spec_schema(),
                       "parameters to freeze ([[train.freeze]] module, frozen), applied in order; frozen parameters "
                       "get no gradient, no update and no weight decay"),
        table_list_key("freeze_schedule", &freeze_stage_schema(),
                       "freeze stages by step ([[train.freeze_schedule]] start_step, [[train.freeze_schedule.specs]]); "
                       "from start_step on a stage's specs override earlier ones for the same module")},
       false,
       "the step loop; loss_fn picks the loss plugin, hooks the hook plugins"});
  s.push_back(
      {"optimizer",
       {string_key("name", "adamw", "optimizer plugin"), float_key("lr", 3e-4, "peak learning rate"),
        float_key("weight_decay", 0.1, "decoupled weight decay"),
        float_list_key("betas", {0.9, 0.95}, "(beta1, beta2)"), float_key("eps", 1e-8, "denominator epsilon"),
        bool_key("fused", true, "fused kernel where available")},
       false,
       "name picks the optimizer plugin"});
  s.push_back({"scheduler",
               {string_key("name", "cosine", "scheduler plugin"), int_key("warmup_steps", 2000, "linear warmup steps"),
                optional_key(KeyType::Int, "decay_steps", "decay length (unset: max_steps - warmup [- stable])"),
                float_key("min_lr_ratio", 0.1, "final learning rate as a fraction of the peak")},
               false,
               "name picks the scheduler plugin"});
  return s;
}

}  // namespace kforge::config::schema_parts
