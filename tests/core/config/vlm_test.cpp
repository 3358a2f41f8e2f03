// The optional VLM sections: [vision_encoder], [adapter], [vlm] (a union on arch), [video], [time_embedding], their
// per-section rules and the cross-section rules of JobConfig (§1.1, §1.2).
#include <gtest/gtest.h>

#include "config_helpers.h"
#include "config/rules.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

const std::string kVlm = "[vision_encoder]\n[vlm]\n";

struct BadVlmValue {
  const char* name;
  std::string toml;
  std::vector<std::string> expect;
};
void PrintTo(const BadVlmValue& c, std::ostream* os) { *os << c.name; }

class VlmRule : public ::testing::TestWithParam<BadVlmValue> {};

TEST_P(VlmRule, RejectsWithKeyValueAndWhatIsAllowed) {
  expect_has(load_error(GetParam().toml), GetParam().expect);
}

const BadVlmValue kRules[] = {
    {"encoder_type",
     "[vision_encoder]\ntype = \"vit\"\n",
     {"cfg.toml:2:8: [vision_encoder] type = \"vit\": no vision_encoder 'vit' in the loaded plugins",
      "random (libkforge_vision.so 1.0.0)"}},
    {"encoder_feature_dim",
     "[vision_encoder]\nfeature_dim = -1\n",
     {"[vision_encoder] feature_dim = -1", "must be >= 0"}},
    {"encoder_num_tokens", "[vision_encoder]\nnum_tokens = -4\n", {"[vision_encoder] num_tokens = -4", "must be >= 0"}},
    {"adapter_type",
     "[adapter]\ntype = \"qformer\"\n",
     {"[adapter] type = \"qformer\": no adapter 'qformer' in the loaded plugins",
      "attentional_pool (libkforge_vision.so 1.0.0)"}},
    {"adapter_hidden_dim", "[adapter]\nhidden_dim = -1\n", {"[adapter] hidden_dim = -1", "must be >= 0"}},
    {"adapter_activation",
     "[adapter]\nactivation = \"tanh\"\n",
     {"[adapter] activation = \"tanh\"", "allowed values are gelu, silu, relu"}},
    {"adapter_pool_window", "[adapter]\npool_window = 0\n", {"[adapter] pool_window = 0", "must be > 0"}},
    {"adapter_pool_heads", "[adapter]\npool_heads = 0\n", {"[adapter] pool_heads = 0", "must be > 0"}},
    {"vlm_max_text_len", kVlm + "max_text_len = 0\n", {"[vlm] max_text_len = 0", "must be > 0"}},
    {"vlm_freeze_schedule_monotonic",
     kVlm + "[[vlm.freeze_schedule]]\nstart_step = 100\n[[vlm.freeze_schedule]]\nstart_step = 50\n",
     {"[vlm.freeze_schedule[1]] start_step = 50", "strictly monotonic"}},
    {"vlm_freeze_schedule_duplicate",
     kVlm + "[[vlm.freeze_schedule]]\nstart_step = 100\n[[vlm.freeze_schedule]]\nstart_step = 100\n",
     {"[vlm.freeze_schedule[1]] start_step = 100", "strictly monotonic"}},
    {"vlm_freeze_stage_needs_start",
     kVlm + "[[vlm.freeze_schedule]]\n",
     {"[vlm.freeze_schedule[0]] start_step is required"}},
    {"vlm_freeze_spec_needs_module", kVlm + "[[vlm.freeze]]\nfrozen = false\n", {"[vlm.freeze[0]] module is required"}},
    {"vlm_freeze_spec_unknown_key",
     kVlm + "[[vlm.freeze]]\nmodule = \"adapter\"\nfrozn = true\n",
     {"unknown key 'frozn' in [vlm.freeze[0]]", "Did you mean 'frozen'?"}},
    {"vlm_module_patterns_type",
     kVlm + "[vlm.module_patterns]\ntransformer = 3\n",
     {"[vlm] module_patterns.transformer = 3", "expected a list of strings"}},
    {"vlm_arch_unknown",
     "[vision_encoder]\n[vlm]\narch = \"mott\"\n",
     {"cfg.toml:3:8: [vlm] arch = \"mott\": no modality_strategy 'mott' in the loaded plugins",
      "joint_decoder (libkforge_vlm.so 1.0.0)", "Did you mean 'mot'?"}},
    {"ca_cadence",
     kVlm + "arch = \"cross_attention\"\ncross_attention_every_n_layers = 0\n",
     {"[vlm] cross_attention_every_n_layers = 0", "must be > 0"}},
    {"ca_heads",
     kVlm + "arch = \"cross_attention\"\ncross_attention_n_heads = -1\n",
     {"[vlm] cross_attention_n_heads = -1", "must be >= 0"}},
    {"ca_kv_heads",
     kVlm + "arch = \"cross_attention\"\ncross_attention_n_kv_heads = -1\n",
     {"[vlm] cross_attention_n_kv_heads = -1", "must be >= 0"}},
    {"mot_two_modalities",
     kVlm + "arch = \"mot\"\nmot_modalities = [\"text\"]\n",
     {"[vlm] mot_modalities = [\"text\"]", "at least 2 entries"}},
    {"mot_needs_image",
     kVlm + "arch = \"mot\"\nmot_modalities = [\"text\", \"audio\"]\n",
     {"[vlm] mot_modalities", "must include \"image\""}},
    {"mot_needs_text",
     kVlm + "arch = \"mot\"\nmot_modalities = [\"image\", \"audio\"]\n",
     {"[vlm] mot_modalities", "must include \"text\""}},
    {"mot_duplicates",
     kVlm + "arch = \"mot\"\nmot_modalities = [\"image\", \"text\", \"image\"]\n",
     {"[vlm] mot_modalities", "must not contain duplicates"}},
    {"mot_image_heads", kVlm + "arch = \"mot\"\nmot_image_n_heads = -2\n", {"[vlm] mot_image_n_heads = -2", ">= 0"}},
    {"mot_warm_start_path",
     kVlm + "arch = \"mot\"\nmot_warm_start_from_text = true\n",
     {"[vlm] mot_warm_start_from_text = true", "requires [vlm] mot_warm_start_path"}},
    {"mot_warm_start_flag",
     kVlm + "arch = \"mot\"\nmot_warm_start_path = \"text/step_10\"\n",
     {"[vlm] mot_warm_start_path = \"text/step_10\"", "mot_warm_start_from_text = false"}},
    {"moma_modalities",
     kVlm + "arch = \"moma\"\nmoma_modalities = [\"image\"]\n",
     {"[vlm] moma_modalities = [\"image\"]", "at least 2 entries"}},
    {"moma_experts_missing",
     kVlm + "arch = \"moma\"\nmoma_experts_per_modality = { image = 4 }\n",
     {"[vlm] moma_experts_per_modality = { image = 4 }", "no entry for modality 'text'"}},
    {"moma_experts_extra",
     kVlm + "arch = \"moma\"\nmoma_experts_per_modality = { image = 4, text = 4, audio = 2 }\n",
     {"[vlm] moma_experts_per_modality", "unknown modality 'audio'"}},
    {"moma_experts_positive",
     kVlm + "arch = \"moma\"\nmoma_experts_per_modality = { image = 0, text = 4 }\n",
     {"[vlm] moma_experts_per_modality", "'image' must be > 0", "For dense per-modality FFN use arch='mot' instead"}},
    {"moma_experts_int",
     kVlm + "arch = \"moma\"\nmoma_experts_per_modality = { image = 1.5, text = 4 }\n",
     {"[vlm] moma_experts_per_modality.image = 1.5", "expected an integer"}},
    {"moma_capacity",
     kVlm + "arch = \"moma\"\nmoma_capacity_factor = -0.5\n",
     {"[vlm] moma_capacity_factor = -0.5", "must be >= 0"}},
    {"video_min_frames", kVlm + "[video]\nmin_frames = 0\n", {"[video] min_frames = 0", "must be >= 1"}},
    {"video_max_frames",
     kVlm + "[video]\nmax_frames = 0\nmin_frames = 1\n",
     {"[video] max_frames = 0", "must be >= 1"}},
    {"video_min_le_max",
     kVlm + "[video]\nmin_frames = 8\nmax_frames = 4\n",
     {"[video] min_frames = 8", "must be <= max_frames (4)"}},
    {"video_fps", kVlm + "[video]\nfps = 0.0\n", {"[video] fps = 0.0", "must be > 0"}},
    {"video_frame_size", kVlm + "[video]\nframe_size = 0\n", {"[video] frame_size = 0", "must be > 0"}},
    {"video_max_samples", kVlm + "[video]\nmax_samples = -1\n", {"[video] max_samples = -1", "must be >= 0"}},
    {"video_split",
     kVlm + "[video]\nsplit = \"test\"\n",
     {"[video] split = \"test\"", "allowed values are train, validation"}},
    {"video_dataset_type",
     kVlm + "[video]\ndataset_type = \"kinetics\"\n",
     {"[video] dataset_type = \"kinetics\"", "no video_dataset 'kinetics' in the loaded plugins", "Known: webvid"}},
    {"video_sampling_policy",
     kVlm + "[video]\nsampling_policy = \"random\"\n",
     {"[video] sampling_policy = \"random\"", "no frame_sampler 'random' in the loaded plugins", "Known: uniform"}},
    {"time_embedding_type",
     kVlm + "[video]\n[time_embedding]\ntype = \"learned\"\n",
     {"[time_embedding] type = \"learned\"", "no time_embedding 'learned' in the loaded plugins", "Known: sinusoidal"}},
    {"time_embedding_num_bands",
     kVlm + "[video]\n[time_embedding]\ntype = \"sinusoidal\"\nnum_bands = 0\n",
     {"[time_embedding] num_bands = 0", "must be >= 1"}},
    {"time_embedding_min_period",
     kVlm + "[video]\n[time_embedding]\ntype = \"sinusoidal\"\nmin_period = 0.0\n",
     {"[time_embedding] min_period = 0.0", "must be > 0"}},
    {"time_embedding_max_period",
     kVlm + "[video]\n[time_embedding]\ntype = \"sinusoidal\"\nmin_period = 8.0\nmax_period = 4.0\n",
     {"[time_embedding] max_period = 4.0", "must be >= min_period (8)"}},
    {"time_embedding_one_frame",
     kVlm + "[video]\nmax_frames = 1\nmin_frames = 1\n[time_embedding]\ntype = \"sinusoidal\"\n",
     {"[video] max_frames = 1", "must be >= 2 with a [time_embedding]"}},
};
INSTANTIATE_TEST_SUITE_P(Sections, VlmRule, ::testing::ValuesIn(kRules),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(VlmUnion, KeysOfTheChosenArchAreAccepted) {
  const auto job = load(kVlm + "arch = \"cross_attention\"\ncross_attention_every_n_layers = 8\n");
  EXPECT_EQ(at(job, "vlm", "cross_attention_every_n_layers").i, 8);
  EXPECT_EQ(job.tree.find("vlm")->find("mot_modalities"), nullptr);  // other arches' keys are not filled in
}

TEST(VlmUnion, KeyOfAnotherArchIsRejectedNamingIt) {
  expect_has(load_error(kVlm + "arch = \"moma\"\nmot_image_n_heads = 8\n"),
             {"cfg.toml:4:21", "key 'mot_image_n_heads' is not valid in [vlm]",
              "it belongs to [vlm] arch = \"mot\", and this config has arch = \"moma\"",
              "Valid keys: arch, dataset, max_text_len"});
  // The default arch is the joint decoder, which has no arch keys.
  expect_has(load_error(kVlm + "cross_attention_every_n_layers = 2\n"),
             {"belongs to [vlm] arch = \"cross_attention\"", "this config has arch = \"joint_decoder\""});
}

TEST(VlmUnion, ArchChosenOnTheCommandLineSelectsTheKeys) {
  const auto job = load(kVlm + "mot_image_n_heads = 8\n", {"--vlm.arch=mot"});
  EXPECT_EQ(at(job, "vlm", "mot_image_n_heads").i, 8);
}

TEST(VlmUnion, FreezeListsAndPatterns) {
  const auto job = load(kVlm +
                        "[[vlm.freeze]]\nmodule = \"transformer\"\n"
                        "[[vlm.freeze_schedule]]\nstart_step = 100\n"
                        "[[vlm.freeze_schedule.specs]]\nmodule = \"adapter\"\nfrozen = false\n"
                        "[vlm.module_patterns]\nlm_head = [\"transformer.output\"]\n");
  EXPECT_EQ(at(job, "vlm", "freeze").to_toml(), "[{ module = \"transformer\", frozen = true }]");
  EXPECT_EQ(at(job, "vlm", "freeze_schedule").to_toml(),
            "[{ start_step = 100, specs = [{ module = \"adapter\", frozen = false }] }]");
  // A dict replaces the default wholesale (KempnerForge: plain dict fields are not merged).
  EXPECT_EQ(at(job, "vlm", "module_patterns").to_toml(), "{ lm_head = [\"transformer.output\"] }");
}

TEST(VlmCrossSection, VlmNeedsVisionEncoder) {
  expect_has(load_error("[vlm]\n"), {"cfg.toml:1:1: [vlm]", "[vision_encoder] is missing"});
}

TEST(VlmCrossSection, VideoNeedsVlm) {
  expect_has(load_error("[vision_encoder]\n[video]\n"), {"[video]", "[video] is set but [vlm] is missing"});
}

TEST(VlmCrossSection, TimeEmbeddingNeedsVideoUnlessItIsNone) {
  expect_has(load_error(kVlm + "[time_embedding]\ntype = \"sinusoidal\"\n"),
             {"[time_embedding]", "[video] is missing", "or set type = \"none\""});
  // "none" selects no component: a config may keep the section switched off, with or without [video].
  EXPECT_EQ(at(load(kVlm + "[time_embedding]\n"), "time_embedding", "type").s, "none");
  EXPECT_EQ(at(load(kVlm + "[video]\n[time_embedding]\ntype = \"none\"\n"), "time_embedding", "num_bands").i, 16);
  EXPECT_EQ(at(load(kVlm + "[video]\n[time_embedding]\ntype = \"sinusoidal\"\n"), "time_embedding", "max_period").f,
            256.0);
}

TEST(VlmCrossSection, MaxSeqLenCoversImageTokensAndText) {
  // 196 image tokens + 512 text = 708 <= 2048.
  EXPECT_NO_THROW(load("[vision_encoder]\nnum_tokens = 196\n[vlm]\n"));
  expect_has(load_error("[model]\nmax_seq_len = 600\n[vision_encoder]\nnum_tokens = 196\n[vlm]\n"),
             {"cfg.toml:2:15: [model] max_seq_len = 600",
              "residual_image_tokens (196) + vlm.max_text_len (512) = 708"});
  // Cross-attention keeps image tokens out of the residual stream.
  EXPECT_NO_THROW(load("[model]\nmax_seq_len = 600\n[vision_encoder]\nnum_tokens = 196\n[vlm]\narch = "
                       "\"cross_attention\"\n"));
  // Video: frames x per-frame tokens; avgpool window 2 on a 14x14 grid gives 49 per frame.
  expect_has(load_error("[vision_encoder]\nnum_tokens = 196\n[adapter]\ntype = \"avgpool\"\n[vlm]\n[video]\n"
                        "max_frames = 32\n"),
             {"[model] max_seq_len = 2048", "residual_image_tokens (1568) + vlm.max_text_len (512) = 2080"});
  EXPECT_NO_THROW(load("[vision_encoder]\nnum_tokens = 196\n[adapter]\ntype = \"avgpool\"\n[vlm]\n[video]\n"
                       "max_frames = 31\n"));
  // Ceil edges: a 27x27 grid with window 2 gives 14x14 = 196.
  expect_has(load_error("[model]\nmax_seq_len = 700\n[vision_encoder]\nnum_tokens = 729\n[adapter]\ntype = "
                        "\"avgpool\"\n[vlm]\n"),
             {"residual_image_tokens (196)"});
  // num_tokens 0 means "probe at build time": no config-time check.
  EXPECT_NO_THROW(load("[model]\nmax_seq_len = 16\n[vision_encoder]\n[vlm]\n"));
}

TEST(VlmCrossSection, PoolingNeedsSquareGrid) {
  expect_has(load_error("[vision_encoder]\nnum_tokens = 200\n[adapter]\ntype = \"avgpool\"\n[vlm]\n"),
             {"[vision_encoder] num_tokens = 200", "must be a perfect square"});
  expect_has(load_error("[vision_encoder]\nnum_tokens = 729\n[adapter]\ntype = \"attentional_pool\"\n[vlm]\n"),
             {"[adapter] pool_window = 2", "(27x27) divisible by the window"});
}

TEST(VlmWorld, SeqLenCoversImageTokensAndText) {
  const std::string toml = "[train]\nseq_len = 512\n[vision_encoder]\nnum_tokens = 64\n[vlm]\n";
  expect_has(world_error(toml, 1), {"cfg.toml:2:11: [train] seq_len = 512",
                                    "residual_image_tokens (64) + vlm.max_text_len (512) = 576"});
  const config::JobConfig ok = load(toml, {"--train.seq_len=576"});
  EXPECT_NO_THROW(config::check_world(ok.tree, 1));
}

TEST(VlmWorld, NoPipelineParallel) {
  expect_has(world_error(kVlm + "[distributed]\npp = 2\n", 2),
             {"[distributed] pp = 2", "VLM + Pipeline Parallelism is not supported"});
}

TEST(VlmWorld, CrossAttentionBlocksMustExistAndTheirHeadsDivide) {
  const std::string ca = "[model]\ndim = 64\nn_layers = 4\nn_heads = 4\n" + kVlm + "arch = \"cross_attention\"\n";
  expect_has(
      world_error(ca + "cross_attention_every_n_layers = 5\n", 1),
      {"[vlm] cross_attention_every_n_layers = 5", "no cross-attention block in the 4 text blocks", "at most 4"});
  expect_has(world_error(ca + "cross_attention_n_heads = 6\n", 1),
             {"[vlm] cross_attention_n_heads = 6", "do not divide [model] dim = 64"});
  expect_has(world_error(ca + "cross_attention_n_heads = 8\ncross_attention_n_kv_heads = 3\n", 1),
             {"[vlm] cross_attention_n_kv_heads = 3", "do not divide the 8 cross-attention heads"});
  const config::JobConfig ok = load(ca + "cross_attention_n_heads = 8\ncross_attention_n_kv_heads = 2\n");
  EXPECT_NO_THROW(config::check_world(ok.tree, 1));
}

TEST(VlmWorld, MomaRejectsMoeAndExpertParallel) {
  const std::string moma = kVlm + "arch = \"moma\"\n";
  expect_has(world_error(moma + "[model]\nnum_experts = 4\n", 1),
             {"[model] num_experts = 4", "MoMa + model.num_experts > 0 is rejected"});
  // MoMa + ep > 1 is rejected too (with num_experts = 0 the general "ep needs MoE" rule fires first,
  // as in KempnerForge's validate).
  expect_has(world_error(moma + "[distributed]\nep = 2\n", 2), {"[distributed] ep = 2", "ep > 1"});
  const config::JobConfig ok = load(moma);
  EXPECT_NO_THROW(config::check_world(ok.tree, 1));
}

}  // namespace
}  // namespace kforge::test
