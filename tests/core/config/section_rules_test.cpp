// Per-section rules (KempnerForge's __post_init__ checks, §1.2): each rejects a bad value with a
// message naming the source, the section, the key, the value and what is allowed.
#include <gtest/gtest.h>

#include "config_helpers.h"

namespace kforge::test {
namespace {

struct BadValue {
  const char* name;
  std::string toml;                    ///< file text ("" for none)
  std::vector<std::string> overrides;  ///< command-line overrides
  std::vector<std::string> expect;     ///< substrings of the error message
};

void PrintTo(const BadValue& c, std::ostream* os) { *os << c.name; }

class SectionRule : public ::testing::TestWithParam<BadValue> {};

TEST_P(SectionRule, RejectsWithKeyValueAndWhatIsAllowed) {
  const BadValue& c = GetParam();
  const std::string message = load_error(c.toml, c.overrides);
  for (const std::string& part : c.expect) EXPECT_NE(message.find(part), std::string::npos) << message;
}

// One override → "command line: [section] key = value: ..."
BadValue cli(const char* name, const std::string& arg, const std::string& head, const std::string& allowed,
             std::vector<std::string> more = {}) {
  BadValue c{name, "", more, {"command line: " + head, allowed}};
  c.overrides.insert(c.overrides.begin(), arg);
  return c;
}

const BadValue kModel[] = {
    cli("dim", "--model.dim=0", "[model] dim = 0", "must be > 0"),
    cli("n_layers", "--model.n_layers=-1", "[model] n_layers = -1", "must be > 0"),
    cli("n_heads", "--model.n_heads=0", "[model] n_heads = 0", "must be > 0"),
    cli("vocab_size", "--model.vocab_size=0", "[model] vocab_size = 0", "must be > 0"),
    cli("n_kv_heads", "--model.n_kv_heads=0", "[model] n_kv_heads = 0", "must be > 0"),
    cli("dim_divisible", "--model.n_heads=12", "[model] n_heads = 12", "dim (4096) must be divisible by n_heads"),
    cli("kv_divisible", "--model.n_kv_heads=5", "[model] n_kv_heads = 5", "n_heads (32) must be divisible by n_kv_heads"),
    cli("sdpa_backend", "--model.sdpa_backend=fast", "[model] sdpa_backend = \"fast\"",
        "allowed values are auto, flash, efficient, cudnn, math"),
    cli("norm_type", "--model.norm_type=rmsnrom", "[model] norm_type = \"rmsnrom\"", "Did you mean 'rmsnorm'?"),
    cli("activation", "--model.activation=tanh", "[model] activation = \"tanh\"", "allowed values are silu, gelu, relu"),
    cli("max_seq_len", "--model.max_seq_len=0", "[model] max_seq_len = 0", "must be > 0"),
    cli("norm_eps", "--model.norm_eps=0", "[model] norm_eps = 0.0", "must be > 0"),
    cli("init_std", "--model.init_std=-0.02", "[model] init_std = -0.02", "must be > 0"),
    cli("ffn_dim_multiplier", "--model.ffn_dim_multiplier=0", "[model] ffn_dim_multiplier = 0.0", "must be > 0"),
    cli("ffn_hidden_dim", "--model.ffn_hidden_dim=0", "[model] ffn_hidden_dim = 0", "must be > 0"),
    cli("num_experts", "--model.num_experts=-1", "[model] num_experts = -1", "must be >= 0"),
    cli("moe_capacity_factor", "--model.num_experts=4", "[model] moe_capacity_factor = -1.0", "must be >= 0",
        {"--model.moe_capacity_factor=-1.0"}),
    cli("moe_shared_experts", "--model.num_experts=4", "[model] moe_shared_experts = -1", "must be >= 0",
        {"--model.moe_shared_experts=-1"}),
    cli("moe_top_k_positive", "--model.num_experts=4", "[model] moe_top_k = 0", "must be > 0", {"--model.moe_top_k=0"}),
    cli("moe_top_k_le_experts", "--model.num_experts=4", "[model] moe_top_k = 5", "must be <= num_experts (4)",
        {"--model.moe_top_k=5"}),
    cli("moe_frequency", "--model.num_experts=4", "[model] moe_frequency = 0", "must be > 0",
        {"--model.moe_frequency=0"}),
    cli("moe_sequence_aux", "--model.num_experts=4", "[model] moe_sequence_aux_loss_weight = -0.1", "must be >= 0",
        {"--model.moe_sequence_aux_loss_weight=-0.1"}),
    cli("moe_bias_schedule", "--model.moe_bias_schedule=linear", "[model] moe_bias_schedule = \"linear\"",
        "allowed values are constant, cosine_decay, linear_warmup"),
    cli("moe_expert_ffn_multiplier", "--model.num_experts=4", "[model] moe_expert_ffn_multiplier = 0.0",
        "must be > 0", {"--model.moe_expert_ffn_multiplier=0.0"}),
    cli("moe_router_z_loss", "--model.num_experts=4", "[model] moe_router_z_loss_weight = -1.0", "must be >= 0",
        {"--model.moe_router_z_loss_weight=-1.0"}),
};
INSTANTIATE_TEST_SUITE_P(Model, SectionRule, ::testing::ValuesIn(kModel),
                         [](const auto& info) { return std::string(info.param.name); });

const BadValue kTrain[] = {
    cli("batch_size", "--train.batch_size=0", "[train] batch_size = 0", "must be > 0"),
    cli("seq_len", "--train.seq_len=0", "[train] seq_len = 0", "must be > 0"),
    cli("max_steps", "--train.max_steps=0", "[train] max_steps = 0", "must be > 0"),
    cli("grad_accum_steps", "--train.grad_accum_steps=0", "[train] grad_accum_steps = 0", "must be > 0"),
    cli("grad_clip_norm", "--train.grad_clip_norm=0", "[train] grad_clip_norm = 0.0", "must be > 0"),
    cli("z_loss_weight", "--train.z_loss_weight=-1e-4", "[train] z_loss_weight = -0.0001", "must be >= 0"),
    cli("ce_chunk_size", "--train.ce_chunk_size=-1", "[train] ce_chunk_size = -1", "must be >= 0"),
    cli("shutdown_timeout_sec", "--train.shutdown_timeout_sec=-1", "[train] shutdown_timeout_sec = -1.0", "must be >= 0"),
    cli("nccl_health_check_interval", "--train.nccl_health_check_interval=-1", "[train] nccl_health_check_interval = -1",
        "must be >= 0"),
    cli("nccl_health_check_timeout_sec", "--train.nccl_health_check_timeout_sec=0",
        "[train] nccl_health_check_timeout_sec = 0.0", "must be > 0"),
    cli("num_threads", "--train.num_threads=-2", "[train] num_threads = -2", "must be >= 0"),
    cli("nan_max_consecutive", "--train.nan_max_consecutive=0", "[train] nan_max_consecutive = 0", "must be > 0"),
    cli("mixed_precision", "--train.mixed_precision=int8", "[train] mixed_precision = \"int8\"",
        "allowed values are bf16, fp16, fp32, fp8"),
    cli("activation_checkpointing", "--train.activation_checkpointing=partial",
        "[train] activation_checkpointing = \"partial\"", "allowed values are none, full, selective"),
};
INSTANTIATE_TEST_SUITE_P(Train, SectionRule, ::testing::ValuesIn(kTrain),
                         [](const auto& info) { return std::string(info.param.name); });

const BadValue kOptimizer[] = {
    cli("lr", "--optimizer.lr=0", "[optimizer] lr = 0.0", "must be > 0"),
    cli("weight_decay", "--optimizer.weight_decay=-0.1", "[optimizer] weight_decay = -0.1", "must be >= 0"),
    cli("eps", "--optimizer.eps=0", "[optimizer] eps = 0.0", "must be > 0"),
};
INSTANTIATE_TEST_SUITE_P(Optimizer, SectionRule, ::testing::ValuesIn(kOptimizer),
                         [](const auto& info) { return std::string(info.param.name); });

const BadValue kScheduler[] = {
    cli("warmup_steps", "--scheduler.warmup_steps=-1", "[scheduler] warmup_steps = -1", "must be >= 0"),
    cli("min_lr_ratio_high", "--scheduler.min_lr_ratio=1.5", "[scheduler] min_lr_ratio = 1.5", "must be in [0, 1]"),
    cli("min_lr_ratio_low", "--scheduler.min_lr_ratio=-0.1", "[scheduler] min_lr_ratio = -0.1", "must be in [0, 1]"),
    cli("wsd_decay_type", "--scheduler.wsd_decay_type=exp", "[scheduler] wsd_decay_type = \"exp\"",
        "allowed values are cosine, linear, sqrt"),
    cli("rex_alpha", "--scheduler.rex_alpha=0", "[scheduler] rex_alpha = 0.0", "must be > 0"),
    cli("decay_steps", "--scheduler.decay_steps=-1", "[scheduler] decay_steps = -1", "must be >= 0"),
    cli("stable_steps", "--scheduler.stable_steps=-1", "[scheduler] stable_steps = -1", "must be >= 0"),
};
INSTANTIATE_TEST_SUITE_P(Scheduler, SectionRule, ::testing::ValuesIn(kScheduler),
                         [](const auto& info) { return std::string(info.param.name); });

const BadValue kData[] = {
    cli("num_workers", "--data.num_workers=-1", "[data] num_workers = -1", "must be >= 0"),
    cli("prefetch_factor", "--data.prefetch_factor=0", "[data] prefetch_factor = 0", "must be >= 1"),
    cli("hf_image_size", "--data.hf_image_size=0", "[data] hf_image_size = 0", "must be in [1, 8192]"),
    cli("mix_temperature", "--data.mix_temperature=0", "[data] mix_temperature = 0.0", "must be > 0"),
    cli("anneal_start_step", "--data.anneal_start_step=-5", "[data] anneal_start_step = -5", "must be >= 0"),
    {"source_needs_path",
     "[[data.datasets]]\nname = \"wiki\"\n",
     {},
     {"cfg.toml:1:1: [data.datasets[0]] path = \"\"", "each dataset needs a path or an hf_name"}},
    {"source_weight",
     "[[data.datasets]]\npath = \"a\"\nweight = -0.5\n",
     {},
     {"cfg.toml:3:10: [data.datasets[0]] weight = -0.5", "must be >= 0"}},
    {"phases_increasing",
     "[[data.phases]]\nstart_step = 100\n[[data.phases]]\nstart_step = 100\n",
     {},
     {"[data.phases[1]] start_step = 100", "strictly increasing"}},
    {"phase_start_negative",
     "[[data.phases]]\nstart_step = -1\n",
     {},
     {"[data.phases[0]] start_step = -1", "must be >= 0"}},
    {"phase_lr_scale",
     "[[data.phases]]\nstart_step = 10\nlr_scale = 0.0\n",
     {},
     {"[data.phases[0]] lr_scale = 0.0", "must be > 0"}},
    {"phase_weights",
     "[[data.phases]]\nstart_step = 10\ndataset_weights = { wiki = -1.0 }\n",
     {},
     {"[data.phases[0]] dataset_weights = { wiki = -1.0 }", "weight of 'wiki' must be >= 0"}},
    {"phases_and_anneal",
     "[data]\nanneal_start_step = 50\n[[data.phases]]\nstart_step = 10\n",
     {},
     {"cfg.toml:2:21: [data] anneal_start_step = 50", "use phases for multi-phase scheduling"}},
    {"source_path_and_hf_name",
     "[[data.datasets]]\npath = \"a\"\nhf_name = \"export\"\n",
     {},
     {"cfg.toml:3:11: [data.datasets[0]] hf_name = \"export\"", "either path", "or hf_name", "not both"}},
    {"source_hf_config_alone",
     "[[data.datasets]]\npath = \"a\"\nhf_config = \"en\"\n",
     {},
     {"cfg.toml:3:13: [data.datasets[0]] hf_config = \"en\"", "set hf_name too"}},
    {"hf_dataset_and_path",
     "[data]\ndataset_path = \"shards\"\nhf_dataset_name = \"export\"\n",
     {},
     {"cfg.toml:3:19: [data] hf_dataset_name = \"export\"", "set one: dataset_path"}},
    {"hf_dataset_and_mixture",
     "[data]\nhf_dataset_name = \"export\"\n[[data.datasets]]\npath = \"a\"\n",
     {},
     {"cfg.toml:2:19: [data] hf_dataset_name = \"export\"", "names its sources' exports with hf_name"}},
    cli("hf_config_alone", "--eval.hf_dataset_config=en", "[eval] hf_dataset_config = \"en\"",
        "set hf_dataset_name too"),
    cli("hf_empty_text_field", "--data.hf_dataset_text_field=\"\"", "[data] hf_dataset_text_field = \"\"",
        "must name the JSON member", {"--data.hf_dataset_name=export"}),
    cli("hf_streaming_without_export", "--data.hf_streaming=true", "[data] hf_streaming = true",
        "streams the [data] hf_dataset_name export: set hf_dataset_name"),
    cli("hf_streaming_shuffle_buffer_alone", "--data.hf_streaming_shuffle_buffer=5",
        "[data] hf_streaming_shuffle_buffer = 5", "set hf_streaming = true"),
    cli("hf_streaming_shuffle_buffer", "--data.hf_streaming_shuffle_buffer=0", "[data] hf_streaming_shuffle_buffer = 0",
        "must be > 0", {"--data.hf_dataset_name=export", "--data.hf_streaming=true"}),
};
INSTANTIATE_TEST_SUITE_P(Data, SectionRule, ::testing::ValuesIn(kData),
                         [](const auto& info) { return std::string(info.param.name); });

const BadValue kOthers[] = {
    cli("eval_interval", "--eval.interval=0", "[eval] interval = 0", "must be > 0"),
    cli("eval_steps", "--eval.steps=0", "[eval] steps = 0", "must be > 0"),
    cli("metrics_log_interval", "--metrics.log_interval=0", "[metrics] log_interval = 0", "must be > 0"),
    cli("profiling_start_step", "--profiling.start_step=-1", "[profiling] start_step = -1", "must be >= 0"),
    cli("nccl_timeout_sec", "--distributed.nccl_timeout_sec=0", "[distributed] nccl_timeout_sec = 0", "must be > 0"),
    cli("profiling_end_step", "--profiling.end_step=5", "[profiling] end_step = 5", "must be > start_step (5)"),
    cli("dp_shard", "--distributed.dp_shard=0", "[distributed] dp_shard = 0", "must be -1 (auto) or > 0"),
    cli("dp_shard_negative", "--distributed.dp_shard=-2", "[distributed] dp_shard = -2", "must be -1 (auto) or > 0"),
    cli("dp_replicate", "--distributed.dp_replicate=0", "[distributed] dp_replicate = 0", "must be >= 1"),
    cli("tp", "--distributed.tp=0", "[distributed] tp = 0", "must be >= 1"),
    cli("pp", "--distributed.pp=0", "[distributed] pp = 0", "must be >= 1"),
    cli("cp", "--distributed.cp=0", "[distributed] cp = 0", "must be >= 1"),
    cli("ep", "--distributed.ep=0", "[distributed] ep = 0", "must be >= 1"),
    cli("pp_schedule", "--distributed.pp_schedule=zb", "[distributed] pp_schedule = \"zb\"",
        "no pipeline_schedule 'zb' in the loaded plugins"),
    cli("checkpoint_interval", "--checkpoint.interval=0", "[checkpoint] interval = 0", "must be > 0"),
    cli("window_start", "--checkpoint.dyn_ckpt_window.start=-1", "[checkpoint.dyn_ckpt_window] start = -1",
        "must be >= 0"),
    cli("window_stop", "--checkpoint.dyn_ckpt_window.start=10", "[checkpoint.dyn_ckpt_window] stop = 5",
        "must be >= start (10)", {"--checkpoint.dyn_ckpt_window.stop=5"}),
    cli("window_strategy", "--checkpoint.dyn_ckpt_window.strategy=linear",
        "[checkpoint.dyn_ckpt_window] strategy = \"linear\"", "allowed values are power2"),
    cli("async_mode", "--checkpoint.async_mode=yes", "[checkpoint] async_mode = \"yes\"",
        "allowed values are disabled, async, async_with_pinned_mem"),
    cli("export_dtype", "--checkpoint.export_dtype=fp16", "[checkpoint] export_dtype = \"fp16\"",
        "allowed values are float32, bfloat16"),
    cli("exclude_from_loading", "--checkpoint.exclude_from_loading=[\"model\",\"rng\"]",
        "[checkpoint] exclude_from_loading = [\"model\", \"rng\"]", "entries must be"),
};
INSTANTIATE_TEST_SUITE_P(Others, SectionRule, ::testing::ValuesIn(kOthers),
                         [](const auto& info) { return std::string(info.param.name); });

// The boundary values the rules allow.
TEST(SectionRules, BoundaryValuesAreAccepted) {
  EXPECT_NO_THROW(load("", {"--optimizer.betas=(0.0, 0.999)", "--scheduler.min_lr_ratio=0",
                            "--scheduler.warmup_steps=0", "--data.num_workers=0", "--data.prefetch_factor=1",
                            "--distributed.dp_shard=4", "--checkpoint.dyn_ckpt_window.start=5",
                            "--checkpoint.dyn_ckpt_window.stop=5", "--model.n_kv_heads=1"}));
  // MoE keys are only checked for an MoE model (KempnerForge: "If MoE").
  EXPECT_NO_THROW(load("", {"--model.moe_top_k=0", "--model.moe_frequency=0"}));
}

}  // namespace
}  // namespace kforge::test
