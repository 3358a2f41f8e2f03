#include "config/schema.h"

#include <algorithm>

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
// A table of name = value with a typed value (Int, Float or StringList) and a default.
KeySpec TypedDict(const char* name, KeyType item, Value def, const char* doc) {
  KeySpec k{name, KeyType::Dict, std::move(def), false, {}, doc};
  k.item = item;
  return k;
}
// A key without a default that must be given.
KeySpec ReqI(const char* name, const char* doc) { return {name, KeyType::Int, Value::null(), false, {}, doc}; }
KeySpec ReqS(const char* name, const char* doc) { return {name, KeyType::String, Value::null(), false, {}, doc}; }
Value strings(std::vector<std::string> items) {
  std::vector<Value> out;
  for (auto& s : items) out.push_back(Value::string(std::move(s)));
  return Value::make_list(std::move(out));
}
KeySpec Sub(const char* name, const SectionSpec* sub, const char* doc) {
  KeySpec k{name, KeyType::Table, Value::null(), true, {}, doc};
  k.sub = sub;
  return k;
}
KeySpec SubList(const char* name, const SectionSpec* sub, const char* doc, Value def = Value::make_list({})) {
  KeySpec k{name, KeyType::TableList, std::move(def), false, {}, doc};
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

// Freeze directives, shared by [train] and [vlm]: FreezeSpec(module, frozen=True) and
// FreezeStage(start_step, specs).
const SectionSpec kFreezeSpec{"freeze",
                              {ReqS("module",
                                    "an fnmatch pattern over full parameter names (e.g. \"layers.0.*\"), or with "
                                    "[vlm] an alias of vlm.module_patterns; a pattern matching no parameter is an error"),
                               B("frozen", true, "freeze (true) or unfreeze (false) the matched parameters")}};

const SectionSpec kFreezeStage{"freeze_schedule",
                               {ReqI("start_step", "step from which this stage's specs apply"),
                                SubList("specs", &kFreezeSpec, "freeze directives of this stage")}};

Value freeze_spec(const char* module, bool frozen) {
  Value v = Value::make_table();
  v.set("module", Value::string(module));
  v.set("frozen", Value::boolean(frozen));
  return v;
}

// module_patterns: the three base aliases plus the arch's own alias (KempnerForge's defaults),
// sorted by name as every resolved dict is.
Value module_patterns(const std::string& arch) {
  Value v = Value::make_table();
  for (const char* alias : {"transformer", "vision_encoder", "adapter"}) {
    v.set(alias, strings({alias, std::string(alias) + ".*"}));
  }
  if (arch == "cross_attention") {
    v.set("cross_attention", strings({"transformer.cross_attention_layers", "transformer.cross_attention_layers.*"}));
  } else if (arch == "mot" || arch == "moma") {
    v.set(arch, strings({"transformer.layers", "transformer.layers.*"}));
  }
  std::sort(v.table.begin(), v.table.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return v;
}

std::vector<KeySpec> vlm_base_keys(const std::string& arch) {
  return {S("arch", "joint_decoder", "VLM architecture", {"cross_attention", "joint_decoder", "moma", "mot"}),
          I("max_text_len", 512, "fixed text length (padded)"),
          SubList("freeze", &kFreezeSpec, "static freeze directives ([[vlm.freeze]])",
                  Value::make_list({freeze_spec("vision_encoder", true)})),
          SubList("freeze_schedule", &kFreezeStage, "freeze stages by step ([[vlm.freeze_schedule]])"),
          TypedDict("module_patterns", KeyType::StringList, module_patterns(arch),
                    "module alias -> fnmatch patterns over parameter names")};
}

std::vector<KeySpec> vlm_arch_keys(const std::string& arch) {
  Value experts = Value::make_table();
  experts.set("image", Value::integer(4));
  experts.set("text", Value::integer(4));
  if (arch == "cross_attention") {
    return {I("cross_attention_every_n_layers", 4, "a cross-attention block after every n-th text block"),
            I("cross_attention_n_heads", 0, "cross-attention heads (0: model n_heads)"),
            I("cross_attention_n_kv_heads", 0, "cross-attention key/value heads (0: its n_heads)")};
  }
  if (arch == "mot") {
    return {SL("mot_modalities", {"image", "text"}, "modalities with their own weights"),
            I("mot_image_n_heads", 0, "image-stream heads (0: model n_heads)"),
            I("mot_image_n_kv_heads", 0, "image-stream key/value heads (0: model n_kv_heads)"),
            B("mot_warm_start_from_text", false, "copy a text state dict into every modality at step 0"),
            S("mot_warm_start_path", "", "state dict for the warm start")};
  }
  if (arch == "moma") {
    return {SL("moma_modalities", {"image", "text"}, "modalities with their own expert groups"),
            TypedDict("moma_experts_per_modality", KeyType::Int, experts, "experts per modality"),
            F("moma_capacity_factor", 0.0, "expert-choice capacity (0: 1/#experts of the modality)"),
            B("moma_gumbel_noise", true, "Gumbel-sigmoid noise on router scores in training")};
  }
  return {};
}

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
                S("linear_backend", "auto",
                  "fp32 projection GEMMs: oneDNN's sgemm (auto: when LibTorch has oneDNN) or at::linear (aten)",
                  {"auto", "onednn", "aten"}),
                B("fused_kernels", true,
                  "fused RMSNorm, SwiGLU and causal-softmax kernels (false: the composite ATen ops)"),
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
                B("compile_model", true, "whole-model graph compilation (not in kforge: true warns that it has no effect)"),
                S("mixed_precision", "bf16", "parameter/compute precision", {"bf16", "fp16", "fp32", "fp8"}),
                S("activation_checkpointing", "none", "activation checkpointing", {"none", "full", "selective"}),
                S("loss_fn", "cross_entropy", "loss plugin"),
                F("z_loss_weight", 0.0, "PaLM logit z-loss weight"),
                I("ce_chunk_size", 0, "chunked cross-entropy chunk (0: 4096)"),
                F("shutdown_timeout_sec", 600.0, "forced exit this long after a shutdown signal (0: never)"),
                I("nccl_health_check_interval", 0, "steps between collective health checks (0: off)"),
                I("num_threads", 0, "intra-op CPU threads (0: all cores)"),
                I("nan_max_consecutive", 10, "stop after this many consecutive NaN/Inf losses (each is skipped)"),
                SL("hooks", {}, "hook plugins to run, in order"),
                SubList("freeze", &kFreezeSpec,
                        "parameters to freeze ([[train.freeze]] module, frozen), applied in order; frozen parameters "
                        "get no gradient, no update and no weight decay"),
                SubList("freeze_schedule", &kFreezeStage,
                        "freeze stages by step ([[train.freeze_schedule]] start_step, [[train.freeze_schedule.specs]]); "
                        "from start_step on a stage's specs override earlier ones for the same module")},
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
                B("enable_wandb", false, "log to W&B (no W&B backend yet: true warns that it has no effect)"),
                B("enable_tensorboard", false, "log to TensorBoard (no backend yet: true warns that it has no effect)"),
                S("wandb_project", "kempnerforge", "WandB project"),
                OptS("wandb_run_name", "WandB run name"),
                S("wandb_run_id", "", "WandB run id (restored from checkpoints)"),
                S("tensorboard_dir", "tb_logs", "TensorBoard directory"),
                SL("backends", {"console", "jsonl"}, "metric backend plugins"),
                S("run_dir", "", "directory for metric files (empty: checkpoint.dir)"),
                F("peak_tflops", 0.0,
                  "peak TFLOP/s per rank for MFU (0: the CPU's theoretical peak, cores x FLOP/cycle x clock, "
                  "logged at start-up)")},
               false,
               "logging; backends picks the metric backend plugins"});
  s.push_back({"profiling",
               {B("enable", false, "write a trace of the chosen steps"),
                I("start_step", 5, "first profiled step"),
                I("end_step", 8, "step after the last profiled step"),
                S("trace_dir", "profiler_traces", "trace output directory")},
               false,
               "step profiler"});
  s.push_back({"vision_encoder",
               {S("type", "random", "vision encoder", {"clip", "random", "siglip2"}),
                S("path", "", "Hugging Face id or local path of the encoder"),
                I("feature_dim", 0, "encoder feature width (0: probe the encoder)"),
                I("num_tokens", 0, "image tokens per image (0: probe the encoder)")},
               true,
               "the VLM's vision encoder (required by [vlm])"});
  SectionSpec adapter{"adapter",
                      {S("type", "mlp_2layer", "vision-to-text connector",
                         {"attentional_pool", "avgpool", "linear", "mlp_2layer"}),
                       I("hidden_dim", 0, "mlp_2layer hidden width (0: the model dim)"),
                       S("activation", "gelu", "mlp_2layer activation", {"gelu", "silu", "relu"}),
                       I("pool_window", 2, "pooling window side (avgpool, attentional_pool)"),
                       I("pool_heads", 16, "attention heads of attentional_pool")},
                      true,
                      "the VLM's connector (defaults apply when [vlm] is set without it)"};
  adapter.implied_by = "vlm";
  s.push_back(std::move(adapter));
  s.push_back(vlm_section("joint_decoder"));
  s.push_back({"video",
               {S("data_root", "", "root directory of the video dataset"),
                S("dataset_type", "webvid", "video dataset", {"webvid"}),
                S("dataset_name", "webvid-10M", "corpus name under data_root"),
                S("sampling_policy", "uniform", "frame sampling policy", {"uniform"}),
                S("split", "train", "split to read", {"train", "validation"}),
                I("max_samples", 0, "cap on clips read (0: all)"),
                I("max_frames", 16, "frames per clip (the visual-token budget)"),
                I("min_frames", 4, "fewest frames sampled per clip"),
                F("fps", 2.0, "sampling rate in frames per second"),
                I("frame_size", 224, "square frame size in pixels"),
                S("prompt", "", "instruction before the caption (masked from the loss)")},
               true,
               "video training through the VLM (requires [vlm])"});
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

const std::vector<std::string>& vlm_arches() {
  static const std::vector<std::string> arches = {"cross_attention", "joint_decoder", "moma", "mot"};
  return arches;
}

SectionSpec vlm_section(const std::string& arch) {
  const auto& arches = vlm_arches();
  if (std::find(arches.begin(), arches.end(), arch) == arches.end()) {
    throw sdk::ConfigError("Unknown vlm.arch '" + arch + "'. Registered: cross_attention, joint_decoder, moma, mot");
  }
  SectionSpec spec{"vlm", vlm_base_keys(arch), true,
                   "vision-language model; arch picks the architecture and its keys (requires [vision_encoder])"};
  for (KeySpec& k : vlm_arch_keys(arch)) spec.keys.push_back(std::move(k));
  for (const std::string& other : arches) {
    if (other == arch) continue;
    for (const KeySpec& k : vlm_arch_keys(other)) {
      spec.hints.emplace_back(k.name, "it belongs to [vlm] arch = \"" + other + "\", and this config has arch = \"" +
                                          arch + "\". Set arch = \"" + other + "\" or remove the key");
    }
  }
  return spec;
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
