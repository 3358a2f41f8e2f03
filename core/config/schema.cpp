#include "config/schema.h"

#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

KeySpec B(const char* name, bool def, const char* doc) { return {name, KeyType::Bool, Value::boolean(def), false, {}, doc}; }
KeySpec I(const char* name, int64_t def, const char* doc) { return {name, KeyType::Int, Value::integer(def), false, {}, doc}; }
KeySpec F(const char* name, double def, const char* doc) { return {name, KeyType::Float, Value::floating(def), false, {}, doc}; }
KeySpec S(const char* name, const char* def, const char* doc, std::vector<std::string> choices = {}) {
  return {name, KeyType::String, Value::string(def), false, std::move(choices), doc};
}
KeySpec OptI(const char* name, const char* doc) { return {name, KeyType::Int, Value::null(), true, {}, doc}; }
KeySpec OptF(const char* name, const char* doc) { return {name, KeyType::Float, Value::null(), true, {}, doc}; }
KeySpec OptS(const char* name, const char* doc) { return {name, KeyType::String, Value::null(), true, {}, doc}; }
KeySpec FL(const char* name, std::vector<double> def, const char* doc) {
  std::vector<Value> items;
  for (double d : def) items.push_back(Value::floating(d));
  return {name, KeyType::FloatList, Value::make_list(std::move(items)), false, {}, doc};
}
KeySpec SL(const char* name, std::vector<std::string> def, const char* doc, std::vector<std::string> choices = {}) {
  std::vector<Value> items;
  for (auto& s : def) items.push_back(Value::string(s));
  return {name, KeyType::StringList, Value::make_list(std::move(items)), false, std::move(choices), doc};
}
KeySpec Dict(const char* name, const char* doc) { return {name, KeyType::Dict, Value::make_table(), false, {}, doc}; }
KeySpec Sub(const char* name, const SectionSpec* sub, const char* doc) {
  KeySpec k{name, KeyType::Table, Value::null(), true, {}, doc};
  k.sub = sub;
  return k;
}
KeySpec SubList(const char* name, const SectionSpec* sub, const char* doc) {
  KeySpec k{name, KeyType::TableList, Value::make_list({}), false, {}, doc};
  k.sub = sub;
  return k;
}

const SectionSpec kDynWindow{"checkpoint.dyn_ckpt_window",
                             {I("start", 0, "first step of the dense-checkpoint window"),
                              I("stop", 512, "last step of the window"),
                              S("strategy", "power2", "which steps inside the window save", {"power2"})}};

const SectionSpec kDatasetSource{"data.datasets",
                                 {S("path", "", "pre-tokenised directory of this source"),
                                  F("weight", 1.0, "mixture weight (> 0)"),
                                  S("name", "", "metric name; falls back to path or hf_name"),
                                  S("hf_name", "", "Hugging Face dataset id"),
                                  S("hf_config", "", "Hugging Face dataset config")}};

const SectionSpec kPhase{"data.phases",
                         {I("start_step", 0, "step at which this phase starts"),
                          Dict("dataset_weights", "mixture weights by dataset name for this phase"),
                          F("lr_scale", 1.0, "multiplier of every learning rate in this phase")}};

std::vector<SectionSpec> build_schema() {
  std::vector<SectionSpec> s;
  s.push_back({"model",
               {I("dim", 4096, "model width"),
                I("n_layers", 32, "number of decoder blocks"),
                I("n_heads", 32, "attention heads"),
                OptI("n_kv_heads", "key/value heads (unset: n_heads; 1: multi-query)"),
                I("vocab_size", 32000, "vocabulary size"),
                F("ffn_dim_multiplier", 1.0, "multiplier of the SwiGLU hidden width rule"),
                OptI("ffn_hidden_dim", "explicit FFN hidden width (overrides the rule)"),
                S("norm_type", "rmsnorm", "normalisation layer", {"rmsnorm", "layernorm"}),
                F("norm_eps", 1e-5, "normalisation epsilon"),
                S("activation", "silu", "MLP activation (silu: SwiGLU)", {"silu", "gelu", "relu"}),
                I("max_seq_len", 2048, "longest sequence (RoPE table length)"),
                F("rope_theta", 10000.0, "RoPE base"),
                B("tie_embeddings", false, "share the token embedding with the output head"),
                B("qk_norm", false, "per-head RMSNorm on queries and keys before RoPE"),
                F("init_std", 0.02, "weight init standard deviation"),
                S("model_type", "transformer", "model plugin to build"),
                S("sdpa_backend", "auto", "attention kernel", {"auto", "flash", "efficient", "cudnn", "math"}),
                I("num_experts", 0, "experts per MoE layer (0: dense)"),
                I("moe_top_k", 2, "experts per token"),
                I("moe_frequency", 1, "layer i is MoE iff (i+1) % moe_frequency == 0"),
                S("moe_router", "softmax_topk", "router plugin"),
                I("moe_shared_experts", 0, "shared experts applied to every token"),
                F("moe_aux_loss_weight", 0.01, "load-balance loss weight"),
                F("moe_capacity_factor", 0.0, "expert capacity factor (0: no dropping)"),
                F("moe_sequence_aux_loss_weight", 0.0, "sequence aux loss weight (sigmoid router)"),
                B("moe_gradient_scale", false, "scale expert outputs by avg_tokens/count"),
                S("moe_bias_schedule", "constant", "expert-bias update schedule",
                  {"constant", "cosine_decay", "linear_warmup"}),
                B("moe_packed_experts", false, "packed (E, in, out) expert weights"),
                F("moe_expert_ffn_multiplier", 1.0, "fine-grained expert width multiplier"),
                F("moe_router_z_loss_weight", 0.0, "router z-loss weight")},
               false,
               "the model architecture; model_type picks the model plugin"});
  s.push_back({"train",
               {I("batch_size", 8, "per-rank micro-batch size"),
                I("seq_len", 2048, "training sequence length"),
                I("max_steps", 100000, "optimizer steps to train"),
                I("grad_accum_steps", 1, "micro-batches per optimizer step"),
                F("grad_clip_norm", 1.0, "global gradient-norm clip (> 0)"),
                I("seed", 42, "seed of initialisation and, unless data_seed, data order"),
                OptI("data_seed", "seed of the data order (unset: seed)"),
                B("compile_model", true, "accepted for compatibility; kforge has no graph compiler"),
                S("mixed_precision", "bf16", "parameter/compute precision", {"bf16", "fp16", "fp32", "fp8"}),
                S("activation_checkpointing", "none", "activation checkpointing", {"none", "full", "selective"}),
                S("loss_fn", "cross_entropy", "loss plugin"),
                F("z_loss_weight", 0.0, "PaLM logit z-loss weight"),
                I("ce_chunk_size", 0, "chunked cross-entropy chunk (0: 4096)"),
                F("shutdown_timeout_sec", 600.0, "forced exit this long after a shutdown signal (0: never)"),
                I("nccl_health_check_interval", 0, "steps between collective health checks (0: off)"),
                I("num_threads", 0, "intra-op CPU threads (0: all cores)"),
                I("nan_max_consecutive", 10, "stop after this many consecutive NaN/Inf losses (each is skipped)"),
                SL("hooks", {}, "hook plugins to run, in order")},
               false,
               "the step loop; loss_fn picks the loss plugin, hooks the hook plugins"});
  s.push_back({"optimizer",
               {S("name", "adamw", "optimizer plugin"),
                F("lr", 3e-4, "peak learning rate"),
                F("weight_decay", 0.1, "decoupled weight decay"),
                FL("betas", {0.9, 0.95}, "(beta1, beta2)"),
                F("eps", 1e-8, "denominator epsilon"),
                B("fused", true, "fused kernel where available"),
                F("muon_momentum", 0.95, "Muon momentum"),
                I("muon_ns_steps", 5, "Newton-Schulz iterations"),
                OptF("muon_adam_lr", "learning rate of Muon's internal AdamW (unset: lr)"),
                I("schedule_free_warmup_steps", 0, "Schedule-Free warmup steps")},
               false,
               "name picks the optimizer plugin"});
  s.push_back({"scheduler",
               {S("name", "cosine", "scheduler plugin"),
                I("warmup_steps", 2000, "linear warmup steps"),
                OptI("decay_steps", "decay length (unset: max_steps - warmup [- stable])"),
                F("min_lr_ratio", 0.1, "final learning rate as a fraction of the peak"),
                OptI("stable_steps", "WSD stable phase length (unset: 0)"),
                S("wsd_decay_type", "cosine", "WSD decay shape", {"cosine", "linear", "sqrt"}),
                F("rex_alpha", 1.0, "REX exponent")},
               false,
               "name picks the scheduler plugin"});
  static const SectionSpec dataset_source = kDatasetSource;
  static const SectionSpec phase = kPhase;
  s.push_back({"data",
               {S("dataset_path", "", "directory of pre-tokenised shards"),
                S("file_pattern", "*.npy", "glob of shard file names"),
                S("tokenizer_path", "", "tokenizer model (SentencePiece .model)"),
                S("dataset_type", "memmap", "dataset plugin"),
                I("num_workers", 4, "data-loading workers"),
                B("pin_memory", true, "pin host memory (GPU builds)"),
                I("prefetch_factor", 2, "batches prefetched per worker"),
                OptS("hf_dataset_name", "Hugging Face dataset id"),
                OptS("hf_dataset_config", "Hugging Face dataset config"),
                S("hf_dataset_split", "train", "Hugging Face split"),
                S("hf_dataset_text_field", "text", "text column"),
                S("hf_dataset_image_field", "image", "image column (VLM)"),
                S("hf_dataset_prompt_field", "", "prompt column (VLM)"),
                I("hf_image_size", 224, "image size (VLM)"),
                B("hf_streaming", false, "stream the Hugging Face dataset"),
                B("pack_sequences", false, "document-aware attention masking"),
                SubList("datasets", &dataset_source, "mixture sources ([[data.datasets]])"),
                F("mix_temperature", 1.0, "mixture temperature (p ~ w^(1/T))"),
                SubList("phases", &phase, "training phases ([[data.phases]])"),
                I("anneal_start_step", 0, "shortcut for one annealing phase (0: off)"),
                Dict("anneal_weights", "mixture weights of the annealing phase")},
               false,
               "training data; dataset_type picks the dataset plugin"});
  s.push_back({"eval",
               {B("enabled", false, "run evaluation during training"),
                I("interval", 1000, "steps between evaluations"),
                I("steps", 50, "batches per evaluation"),
                S("dataset_path", "", "directory of pre-tokenised eval shards"),
                S("file_pattern", "*.npy", "glob of eval shard names"),
                OptS("hf_dataset_name", "Hugging Face eval dataset"),
                OptS("hf_dataset_config", "Hugging Face eval config"),
                S("hf_dataset_split", "validation", "Hugging Face eval split")},
               false,
               "periodic evaluation (loss and perplexity)"});
  s.push_back({"distributed",
               {I("dp_shard", -1, "FSDP degree (-1: the rest of the world size)"),
                I("dp_replicate", 1, "replicated data-parallel degree (HSDP)"),
                I("tp", 1, "tensor-parallel degree"),
                I("pp", 1, "pipeline-parallel degree"),
                S("pp_schedule", "1f1b", "pipeline schedule", {"1f1b", "gpipe", "interleaved_1f1b"}),
                I("cp", 1, "context-parallel degree"),
                I("ep", 1, "expert-parallel degree"),
                I("nccl_timeout_sec", 1800, "collective timeout in seconds (NCCL and Gloo)"),
                S("backend", "cpu:gloo,cuda:nccl", "process-group backends")},
               false,
               "process groups and the device mesh"});
  static const SectionSpec dyn_window = kDynWindow;
  s.push_back({"checkpoint",
               {S("dir", "checkpoints", "directory of step_N checkpoints"),
                I("interval", 1000, "steps between checkpoints"),
                Sub("dyn_ckpt_window", &dyn_window, "dense checkpointing window ([checkpoint.dyn_ckpt_window])"),
                S("async_mode", "disabled", "background checkpoint writing", {"disabled", "async", "async_with_pinned_mem"}),
                I("keep_last_n", 3, "checkpoints kept (<= 0: all); latest is never deleted"),
                OptS("load_path", "checkpoint to start from when checkpoint.dir has none"),
                S("export_dtype", "bfloat16", "dtype of exported weights", {"float32", "bfloat16"}),
                SL("exclude_from_loading", {}, "state not loaded on resume (\"model\", \"optimizer\")"),
                B("ignore_freeze_mismatch", false, "warn instead of failing on a freeze-state mismatch")},
               false,
               "checkpoint saving, retention and resume"});
  s.push_back({"metrics",
               {I("log_interval", 10, "steps between metric lines"),
                B("enable_wandb", false, "accepted for compatibility (no WandB backend yet)"),
                B("enable_tensorboard", false, "accepted for compatibility (no TensorBoard backend yet)"),
                S("wandb_project", "kempnerforge", "WandB project"),
                OptS("wandb_run_name", "WandB run name"),
                S("wandb_run_id", "", "WandB run id (restored from checkpoints)"),
                S("tensorboard_dir", "tb_logs", "TensorBoard directory"),
                SL("backends", {"console", "jsonl"}, "metric backend plugins"),
                S("run_dir", "", "directory for metric files (empty: checkpoint.dir)"),
                F("peak_tflops", 0.0, "peak TFLOP/s per device for MFU (0: measured GEMM peak on CPU)")},
               false,
               "logging; backends picks the metric backend plugins"});
  s.push_back({"profiling",
               {B("enable", false, "write a trace of the chosen steps"),
                I("start_step", 5, "first profiled step"),
                I("end_step", 8, "step after the last profiled step"),
                S("trace_dir", "profiler_traces", "trace output directory")},
               false,
               "step profiler"});
  return s;
}

}  // namespace

const KeySpec* SectionSpec::find(const std::string& key) const {
  for (const auto& k : keys) {
    if (k.name == key) return &k;
  }
  return nullptr;
}

std::vector<std::string> SectionSpec::key_names() const {
  std::vector<std::string> names;
  for (const auto& k : keys) names.push_back(k.name);
  return names;
}

const std::vector<ComponentSlot>& component_slots() {
  static const std::vector<ComponentSlot> slots = {
      {"model", "model", "model_type", false},    {"router", "model", "moe_router", false},
      {"optimizer", "optimizer", "name", false},  {"scheduler", "scheduler", "name", false},
      {"loss", "train", "loss_fn", false},        {"dataset", "data", "dataset_type", false},
      {"hook", "train", "hooks", true},           {"metric_backend", "metrics", "backends", true},
  };
  return slots;
}

const std::vector<SectionSpec>& core_schema() {
  static const std::vector<SectionSpec> schema = build_schema();
  return schema;
}

const char* key_type_name(KeyType type) {
  switch (type) {
    case KeyType::Bool: return "bool";
    case KeyType::Int: return "int";
    case KeyType::Float: return "float";
    case KeyType::String: return "string";
    case KeyType::IntList: return "int_list";
    case KeyType::FloatList: return "float_list";
    case KeyType::StringList: return "string_list";
    case KeyType::Table: return "table";
    case KeyType::TableList: return "table_list";
    case KeyType::Dict: return "dict";
  }
  return "?";
}

KeyType parse_key_type(const std::string& name) {
  for (KeyType t : {KeyType::Bool, KeyType::Int, KeyType::Float, KeyType::String, KeyType::IntList,
                    KeyType::FloatList, KeyType::StringList}) {
    if (name == key_type_name(t)) return t;
  }
  throw sdk::Error("unknown config key type '" + name +
                   "' (allowed: bool, int, float, string, int_list, float_list, string_list)");
}

}  // namespace kforge::config
