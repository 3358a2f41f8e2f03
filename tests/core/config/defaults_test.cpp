// Defaults: every KempnerForge key exists with KempnerForge's default (§1.1), kforge's optional
// sections are absent unless set, and [adapter] is materialised with [vlm].
#include <gtest/gtest.h>

#include "config_helpers.h"
#include "config/schema.h"

namespace kforge::test {
namespace {

struct Default {
  const char* section;
  const char* key;
  const char* toml;  ///< the default as a TOML literal; nullptr: None
};

// KempnerForge's always-present sections, every field (§1.1).
const Default kDefaults[] = {
    {"model", "dim", "4096"},
    {"model", "n_layers", "32"},
    {"model", "n_heads", "32"},
    {"model", "n_kv_heads", nullptr},
    {"model", "vocab_size", "32000"},
    {"model", "ffn_dim_multiplier", "1.0"},
    {"model", "ffn_hidden_dim", nullptr},
    {"model", "norm_type", "\"rmsnorm\""},
    {"model", "norm_eps", "1e-05"},
    {"model", "activation", "\"silu\""},
    {"model", "max_seq_len", "2048"},
    {"model", "rope_theta", "10000.0"},
    {"model", "tie_embeddings", "false"},
    {"model", "qk_norm", "false"},
    {"model", "init_std", "0.02"},
    {"model", "model_type", "\"transformer\""},
    {"model", "sdpa_backend", "\"auto\""},
    {"model", "num_experts", "0"},
    {"model", "moe_top_k", "2"},
    {"model", "moe_frequency", "1"},
    {"model", "moe_router", "\"softmax_topk\""},
    {"model", "moe_shared_experts", "0"},
    {"model", "moe_aux_loss_weight", "0.01"},
    {"model", "moe_capacity_factor", "0.0"},
    {"model", "moe_sequence_aux_loss_weight", "0.0"},
    {"model", "moe_gradient_scale", "false"},
    {"model", "moe_bias_schedule", "\"constant\""},
    {"model", "moe_packed_experts", "false"},
    {"model", "moe_expert_ffn_multiplier", "1.0"},
    {"model", "moe_router_z_loss_weight", "0.0"},
    {"train", "batch_size", "8"},
    {"train", "seq_len", "2048"},
    {"train", "max_steps", "100000"},
    {"train", "grad_accum_steps", "1"},
    {"train", "grad_clip_norm", "1.0"},
    {"train", "seed", "42"},
    {"train", "data_seed", nullptr},
    {"train", "compile_model", "true"},
    {"train", "mixed_precision", "\"bf16\""},
    {"train", "activation_checkpointing", "\"none\""},
    {"train", "loss_fn", "\"cross_entropy\""},
    {"train", "z_loss_weight", "0.0"},
    {"train", "ce_chunk_size", "0"},
    {"train", "shutdown_timeout_sec", "600.0"},
    {"train", "nccl_health_check_interval", "0"},
    {"optimizer", "name", "\"adamw\""},
    {"optimizer", "lr", "0.0003"},
    {"optimizer", "weight_decay", "0.1"},
    {"optimizer", "betas", "[0.9, 0.95]"},
    {"optimizer", "eps", "1e-08"},
    {"optimizer", "fused", "true"},
    {"optimizer", "muon_momentum", "0.95"},
    {"optimizer", "muon_ns_steps", "5"},
    {"optimizer", "muon_adam_lr", nullptr},
    {"optimizer", "schedule_free_warmup_steps", "0"},
    {"scheduler", "name", "\"cosine\""},
    {"scheduler", "warmup_steps", "2000"},
    {"scheduler", "decay_steps", nullptr},
    {"scheduler", "min_lr_ratio", "0.1"},
    {"scheduler", "stable_steps", nullptr},
    {"scheduler", "wsd_decay_type", "\"cosine\""},
    {"scheduler", "rex_alpha", "1.0"},
    {"data", "dataset_path", "\"\""},
    {"data", "file_pattern", "\"*.npy\""},
    {"data", "tokenizer_path", "\"\""},
    {"data", "num_workers", "4"},
    {"data", "pin_memory", "true"},
    {"data", "prefetch_factor", "2"},
    {"data", "hf_dataset_name", nullptr},
    {"data", "hf_dataset_config", nullptr},
    {"data", "hf_dataset_split", "\"train\""},
    {"data", "hf_dataset_text_field", "\"text\""},
    {"data", "hf_dataset_image_field", "\"image\""},
    {"data", "hf_dataset_prompt_field", "\"\""},
    {"data", "hf_image_size", "224"},
    {"data", "hf_streaming", "false"},
    {"data", "pack_sequences", "false"},
    {"data", "datasets", "[]"},
    {"data", "mix_temperature", "1.0"},
    {"data", "phases", "[]"},
    {"data", "anneal_start_step", "0"},
    {"data", "anneal_weights", "{}"},
    {"eval", "enabled", "false"},
    {"eval", "interval", "1000"},
    {"eval", "steps", "50"},
    {"eval", "dataset_path", "\"\""},
    {"eval", "file_pattern", "\"*.npy\""},
    {"eval", "hf_dataset_name", nullptr},
    {"eval", "hf_dataset_config", nullptr},
    {"eval", "hf_dataset_split", "\"validation\""},
    {"distributed", "dp_shard", "-1"},
    {"distributed", "dp_replicate", "1"},
    {"distributed", "tp", "1"},
    {"distributed", "pp", "1"},
    {"distributed", "pp_schedule", "\"1f1b\""},
    {"distributed", "pp_layer_split", "[]"},
    {"distributed", "cp", "1"},
    {"distributed", "ep", "1"},
    {"distributed", "nccl_timeout_sec", "1800"},
    {"distributed", "backend", "\"cpu:gloo,cuda:nccl\""},
    {"checkpoint", "dir", "\"checkpoints\""},
    {"checkpoint", "interval", "1000"},
    {"checkpoint", "dyn_ckpt_window", nullptr},
    {"checkpoint", "async_mode", "\"disabled\""},
    {"checkpoint", "keep_last_n", "3"},
    {"checkpoint", "load_path", nullptr},
    {"checkpoint", "export_dtype", "\"bfloat16\""},
    {"checkpoint", "exclude_from_loading", "[]"},
    {"checkpoint", "ignore_freeze_mismatch", "false"},
    {"metrics", "log_interval", "10"},
    {"metrics", "enable_wandb", "false"},
    {"metrics", "enable_tensorboard", "false"},
    {"metrics", "wandb_project", "\"kempnerforge\""},
    {"metrics", "wandb_run_name", nullptr},
    {"metrics", "wandb_run_id", "\"\""},
    {"metrics", "tensorboard_dir", "\"tb_logs\""},
    {"profiling", "enable", "false"},
    {"profiling", "start_step", "5"},
    {"profiling", "end_step", "8"},
    {"profiling", "trace_dir", "\"profiler_traces\""},
};

// The optional sections, once present (§1.1).
const Default kOptionalDefaults[] = {
    {"vision_encoder", "type", "\"random\""}, {"vision_encoder", "path", "\"\""},
    {"vision_encoder", "feature_dim", "0"}, {"vision_encoder", "num_tokens", "0"},
    {"adapter", "type", "\"mlp_2layer\""}, {"adapter", "hidden_dim", "0"}, {"adapter", "activation", "\"gelu\""},
    {"adapter", "pool_window", "2"}, {"adapter", "pool_heads", "16"},
    {"vlm", "arch", "\"joint_decoder\""}, {"vlm", "max_text_len", "512"},
    {"vlm", "freeze", "[{ module = \"vision_encoder\", frozen = true }]"}, {"vlm", "freeze_schedule", "[]"},
    {"vlm", "module_patterns",
     "{ adapter = [\"adapter\", \"adapter.*\"], transformer = [\"transformer\", \"transformer.*\"], "
     "vision_encoder = [\"vision_encoder\", \"vision_encoder.*\"] }"},
    {"video", "data_root", "\"\""}, {"video", "dataset_type", "\"webvid\""},
    {"video", "dataset_name", "\"webvid-10M\""}, {"video", "sampling_policy", "\"uniform\""},
    {"video", "split", "\"train\""}, {"video", "max_samples", "0"}, {"video", "max_frames", "16"},
    {"video", "min_frames", "4"}, {"video", "fps", "2.0"}, {"video", "frame_size", "224"},
    {"video", "max_clip_bytes", "2147483648"}, {"vlm", "max_image_bytes", "67108864"}, {"video", "prompt", "\"\""},
};

void expect_default(const config::JobConfig& job, const Default& d) {
  SCOPED_TRACE(std::string("[") + d.section + "] " + d.key);
  const config::Value& v = at(job, d.section, d.key);
  if (d.toml == nullptr) {
    EXPECT_TRUE(v.is_null()) << v.to_toml();
  } else {
    EXPECT_EQ(v.to_toml(), d.toml);
  }
}

TEST(ConfigDefaults, EveryKempnerForgeKeyHasItsDefault) {
  const config::JobConfig job = load("");
  for (const Default& d : kDefaults) expect_default(job, d);
}

TEST(ConfigDefaults, SpotChecksTypedValues) {
  const config::JobConfig job = load("");
  const config::Value& betas = at(job, "optimizer", "betas");
  ASSERT_EQ(betas.list.size(), 2u);
  EXPECT_DOUBLE_EQ(betas.list[0].f, 0.9);
  EXPECT_DOUBLE_EQ(betas.list[1].f, 0.95);
  EXPECT_EQ(at(job, "scheduler", "warmup_steps").i, 2000);
  EXPECT_EQ(at(job, "distributed", "dp_shard").i, -1);
  EXPECT_DOUBLE_EQ(at(job, "optimizer", "lr").f, 3e-4);
  EXPECT_DOUBLE_EQ(at(job, "model", "norm_eps").f, 1e-5);
  EXPECT_EQ(job.train.batch_size, 8);
  EXPECT_EQ(job.train.effective_data_seed(), 42);
  EXPECT_EQ(job.checkpoint.interval, 1000);
  EXPECT_EQ(job.checkpoint.keep_last_n, 3);
  EXPECT_FALSE(job.checkpoint.window.has_value());
  EXPECT_FALSE(job.checkpoint.load_path.has_value());
  EXPECT_EQ(job.distributed.timeout_sec, 1800);
  EXPECT_EQ(job.eval.steps, 50);
  EXPECT_EQ(job.profiling.end_step, 8);
  EXPECT_EQ(job.metrics.log_interval, 10);
  EXPECT_EQ(job.metrics.run_dir, "checkpoints");  // empty run_dir: the checkpoint dir
}

TEST(ConfigDefaults, KforgeAdditionsHaveDefaults) {
  const config::JobConfig job = load("");
  EXPECT_EQ(at(job, "data", "dataset_type").s, "memmap");
  EXPECT_EQ(at(job, "train", "num_threads").i, 0);
  EXPECT_EQ(at(job, "train", "nan_max_consecutive").i, 10);
  EXPECT_EQ(at(job, "train", "hooks").to_toml(), "[]");
  EXPECT_EQ(at(job, "metrics", "backends").to_toml(), "[\"console\", \"jsonl\"]");
}

TEST(ConfigDefaults, OptionalSectionsAbsentUnlessSet) {
  const config::JobConfig job = load("");
  for (const char* s : {"vision_encoder", "adapter", "vlm", "video"}) {
    EXPECT_EQ(job.tree.find(s), nullptr) << s;
  }
  EXPECT_THROW(job.view("vlm"), sdk::ConfigError);
  // The ten always-present sections, in KempnerForge's order.
  std::vector<std::string> names;
  for (const auto& [k, v] : job.tree.table) names.push_back(k);
  EXPECT_EQ(names, (std::vector<std::string>{"model", "train", "optimizer", "scheduler", "data", "eval",
                                             "distributed", "checkpoint", "metrics", "profiling"}));
}

TEST(ConfigDefaults, OptionalSectionsTakeTheirDefaultsWhenPresent) {
  const config::JobConfig job = load("[vision_encoder]\n[vlm]\n[video]\n");
  for (const Default& d : kOptionalDefaults) expect_default(job, d);
}

TEST(ConfigDefaults, AdapterIsMaterialisedWithVlm) {
  const config::JobConfig with_vlm = load("[vision_encoder]\n[vlm]\n");
  ASSERT_NE(with_vlm.tree.find("adapter"), nullptr);
  EXPECT_EQ(at(with_vlm, "adapter", "type").s, "mlp_2layer");
  // Without [vlm], an [adapter] is only there when written.
  EXPECT_EQ(load("[vision_encoder]\n").tree.find("adapter"), nullptr);
  EXPECT_EQ(at(load("[adapter]\npool_window = 3\n"), "adapter", "pool_window").i, 3);
}

TEST(ConfigDefaults, VlmArchDefaults) {
  const auto ca = load("[vision_encoder]\n[vlm]\narch = \"cross_attention\"\n");
  EXPECT_EQ(at(ca, "vlm", "cross_attention_every_n_layers").i, 4);
  EXPECT_EQ(at(ca, "vlm", "cross_attention_n_heads").i, 0);
  EXPECT_EQ(at(ca, "vlm", "cross_attention_n_kv_heads").i, 0);
  EXPECT_EQ(at(ca, "vlm", "module_patterns").find("cross_attention")->to_toml(),
            "[\"transformer.cross_attention_layers\", \"transformer.cross_attention_layers.*\"]");
  const auto mot = load("[vision_encoder]\n[vlm]\narch = \"mot\"\n");
  EXPECT_EQ(at(mot, "vlm", "mot_modalities").to_toml(), "[\"image\", \"text\"]");
  EXPECT_EQ(at(mot, "vlm", "mot_image_n_heads").i, 0);
  EXPECT_EQ(at(mot, "vlm", "mot_image_n_kv_heads").i, 0);
  EXPECT_FALSE(at(mot, "vlm", "mot_warm_start_from_text").b);
  EXPECT_EQ(at(mot, "vlm", "mot_warm_start_path").s, "");
  EXPECT_EQ(at(mot, "vlm", "module_patterns").find("mot")->to_toml(), "[\"transformer.layers\", \"transformer.layers.*\"]");
  const auto moma = load("[vision_encoder]\n[vlm]\narch = \"moma\"\n");
  EXPECT_EQ(at(moma, "vlm", "moma_modalities").to_toml(), "[\"image\", \"text\"]");
  EXPECT_EQ(at(moma, "vlm", "moma_experts_per_modality").to_toml(), "{ image = 4, text = 4 }");
  EXPECT_EQ(at(moma, "vlm", "moma_capacity_factor").f, 0.0);
  EXPECT_TRUE(at(moma, "vlm", "moma_gumbel_noise").b);
  EXPECT_NE(at(moma, "vlm", "module_patterns").find("moma"), nullptr);
  // The joint decoder has no arch keys: only the base seven.
  EXPECT_EQ(load("[vision_encoder]\n[vlm]\n").tree.find("vlm")->table.size(), 7u);
}

TEST(ConfigDefaults, DynamicWindowDefaults) {
  const auto job = load("[checkpoint.dyn_ckpt_window]\n");
  ASSERT_TRUE(job.checkpoint.window.has_value());
  EXPECT_EQ(job.checkpoint.window->start, 0);
  EXPECT_EQ(job.checkpoint.window->stop, 512);
  EXPECT_EQ(job.checkpoint.window->strategy, "power2");
}

TEST(ConfigDefaults, DatasetSourceAndPhaseDefaults) {
  const auto job = load("[[data.datasets]]\npath = \"a\"\n[[data.phases]]\n");
  const config::Value& src = at(job, "data", "datasets").list.at(0);
  EXPECT_EQ(src.to_toml(), "{ path = \"a\", weight = 1.0, name = \"\", hf_name = \"\", hf_config = \"\" }");
  const config::Value& phase = at(job, "data", "phases").list.at(0);
  EXPECT_EQ(phase.to_toml(), "{ start_step = 0, dataset_weights = {}, lr_scale = 1.0 }");
}

}  // namespace
}  // namespace kforge::test
