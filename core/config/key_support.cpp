// The support table: every key of the schema, honoured or not implemented (with the reason).
// A key added to the schema must be added here too (the schema test walks every key); a feature
// that lands moves its keys from not_implemented() to honoured().
#include "config/key_support.h"

#include <map>
#include <utility>
#include <vector>

namespace kforge::config {
namespace {

using Table = std::map<std::pair<std::string, std::string>, KeySupport>;

// Keys this kforge honours, by table.
const std::map<std::string, std::vector<std::string>>& honoured() {
  static const std::map<std::string, std::vector<std::string>> keys = {
      {"model",
       {"dim",
        "n_layers",
        "n_heads",
        "n_kv_heads",
        "vocab_size",
        "ffn_dim_multiplier",
        "ffn_hidden_dim",
        "norm_type",
        "norm_eps",
        "activation",
        "max_seq_len",
        "rope_theta",
        "tie_embeddings",
        "qk_norm",
        "init_std",
        "model_type",
        "sdpa_backend",
        "linear_backend",
        "fused_kernels",
        "num_experts",
        "moe_top_k",
        "moe_frequency",
        "moe_router",
        "moe_shared_experts",
        "moe_aux_loss_weight",
        "moe_capacity_factor",
        "moe_sequence_aux_loss_weight",
        "moe_gradient_scale",
        "moe_bias_schedule",
        "moe_packed_experts",
        "moe_expert_ffn_multiplier",
        "moe_router_z_loss_weight"}},
      {"train",
       {"batch_size", "seq_len", "max_steps", "grad_accum_steps", "grad_clip_norm", "seed", "data_seed",
        "mixed_precision", "loss_scale_init", "loss_scale_growth", "loss_scale_backoff", "loss_scale_growth_interval",
        "loss_fn", "z_loss_weight", "ce_chunk_size", "shutdown_timeout_sec", "nccl_health_check_interval",
        "nccl_health_check_timeout_sec", "num_threads", "device",
        "nan_max_consecutive", "hooks", "freeze", "freeze_schedule", "activation_checkpointing"}},
      {"freeze", {"module", "frozen"}},
      {"freeze_schedule", {"start_step", "specs"}},
      {"optimizer", {"name", "lr", "weight_decay", "betas", "eps", "fused"}},
      {"scheduler", {"name", "warmup_steps", "decay_steps", "min_lr_ratio"}},
      {"data",
       {"dataset_path", "file_pattern", "tokenizer_path", "dataset_type", "datasets", "mix_temperature", "phases",
        "anneal_start_step", "anneal_weights", "pack_sequences", "hf_dataset_name", "hf_dataset_config",
        "hf_dataset_split", "hf_dataset_text_field", "hf_dataset_image_field", "hf_dataset_prompt_field",
        "hf_image_size", "hf_streaming", "hf_streaming_shuffle_buffer",
        "num_workers", "prefetch_factor"}},
      {"data.datasets", {"path", "weight", "name", "hf_name", "hf_config"}},
      {"data.phases", {"start_step", "dataset_weights", "lr_scale"}},
      {"eval",
       {"enabled", "interval", "steps", "dataset_path", "file_pattern", "hf_dataset_name", "hf_dataset_config",
        "hf_dataset_split", "tasks", "task_dir", "task_limit", "seed"}},
      {"distributed",
       {"dp_shard", "dp_replicate", "nccl_timeout_sec", "ep", "tp", "pp", "pp_schedule", "pp_layer_split", "cp"}},
      {"checkpoint",
       {"dir", "interval", "dyn_ckpt_window", "async_mode", "keep_last_n", "load_path", "exclude_from_loading",
        "ignore_freeze_mismatch", "export_dtype"}},
      {"checkpoint.dyn_ckpt_window", {"start", "stop", "strategy"}},
      {"vlm",
       {"arch", "dataset", "max_text_len", "max_image_bytes", "freeze", "freeze_schedule", "module_patterns"}},
      {"vision_encoder", {"type", "path", "feature_dim", "num_tokens"}},
      {"video",
       {"data_root", "dataset_type", "dataset_name", "sampling_policy", "split", "max_samples", "max_frames",
        "min_frames", "fps", "frame_size", "max_clip_bytes", "prompt"}},
      {"adapter", {"type", "hidden_dim", "activation", "pool_window", "pool_heads"}},
      {"time_embedding", {"type", "num_bands", "min_period", "max_period"}},
      {"metrics",
       {"log_interval", "backends", "run_dir", "per_rank", "peak_tflops", "enable_tensorboard", "tensorboard_dir"}},
      {"profiling", {"enable", "start_step", "end_step", "trace_dir"}},
  };
  return keys;
}

KeySupport no_effect(std::string why, Value inert = Value::null()) {
  return {Support::NoEffect, std::move(why), std::move(inert)};
}

// Keys this kforge does not implement.
const Table& not_implemented() {
  static const Table table = [] {
    Table t;
    auto add = [&](const std::string& section, std::vector<std::string> keys, const KeySupport& s) {
      for (auto& k : keys) t[{section, k}] = s;
    };
    add("train", {"compile_model"}, no_effect("kforge has no graph compiler", Value::boolean(false)));
    add("data", {"pin_memory"}, no_effect("this is a CPU build", Value::boolean(false)));
    add("distributed", {"backend"}, no_effect("kforge uses Gloo for CPU tensors and NCCL for CUDA tensors"));
    const std::string wandb =
        "there is no W&B backend; set enable_tensorboard = true and upload the event files with "
        "`wandb sync --sync-tensorboard <tensorboard_dir>`";
    add("metrics", {"enable_wandb"}, no_effect(wandb, Value::boolean(false)));
    add("metrics", {"wandb_project", "wandb_run_name", "wandb_run_id"}, no_effect(wandb));
    return t;
  }();
  return table;
}

}  // namespace

KeySupport key_support(const std::string& section, const std::string& key) {
  const auto missing = not_implemented().find({section, key});
  if (missing != not_implemented().end()) return missing->second;
  const auto keys = honoured().find(section);
  if (keys != honoured().end()) {
    for (const std::string& k : keys->second) {
      if (k == key) return {Support::Honoured, "", Value::null()};
    }
  }
  return {};
}

}  // namespace kforge::config
