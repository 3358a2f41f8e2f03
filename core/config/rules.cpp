#include "config/rules.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <optional>
#include <set>

#include "config/job_config.h"
#include "config/schema.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"

namespace kforge::config {
namespace {

struct Section {
  const Value& table;
  std::string name;

  const Value& at(const char* key) const { return *table.find(key); }
  int64_t i(const char* key) const { return at(key).i; }
  double f(const char* key) const { return at(key).as_number(); }
  bool null(const char* key) const { return at(key).is_null(); }

  // Throws "<source>: [section] key = value: message" unless ok.
  // A defaulted key is reported at its table's position (the [section] header) when there is one.
  void require(bool ok, const char* key, const std::string& message) const {
    if (ok) return;
    const Value& v = at(key);
    const Source& where = v.source.origin.empty() ? table.source : v.source;
    throw sdk::ConfigError(
        fmt::format("{}: [{}] {} = {}: {}", where.describe(), name, key, v.to_toml_brief(), message));
  }
  void positive(const char* key) const { require(at(key).as_number() > 0, key, "must be > 0"); }
  void non_negative(const char* key) const { require(at(key).as_number() >= 0, key, "must be >= 0"); }
};

Section section(const Value& root, const char* name) { return Section{*root.find(name), name}; }

bool has(const Value& root, const char* name) { return root.find(name) != nullptr; }

// Cross-section failure about a whole section: "<source of the table>: message".
[[noreturn]] void fail_section(const Value& table, const std::string& message) {
  throw sdk::ConfigError(fmt::format("{}: {}", table.source.describe(), message));
}

// [[<section>.freeze_schedule]]: start steps >= 0 and strictly increasing.
void check_freeze_schedule(const Section& owner) {
  const Value& stages = owner.at("freeze_schedule");
  for (size_t k = 0; k < stages.list.size(); ++k) {
    Section stage{stages.list[k], fmt::format("{}.freeze_schedule[{}]", owner.name, k)};
    stage.non_negative("start_step");
    if (k == 0) continue;
    const int64_t previous = stages.list[k - 1].find("start_step")->i;
    stage.require(stage.i("start_step") > previous, "start_step",
                  fmt::format("freeze_schedule start_steps must be strictly monotonic (previous stage: {})", previous));
  }
}

void check_model(const Section& m) {
  for (const char* k : {"dim", "n_layers", "n_heads", "vocab_size", "max_seq_len"}) m.positive(k);
  m.positive("norm_eps");
  m.positive("init_std");
  m.positive("ffn_dim_multiplier");
  m.require(m.i("dim") % m.i("n_heads") == 0, "n_heads",
            fmt::format("dim ({}) must be divisible by n_heads", m.i("dim")));
  if (!m.null("n_kv_heads")) {
    m.positive("n_kv_heads");
    m.require(m.i("n_heads") % m.i("n_kv_heads") == 0, "n_kv_heads",
              fmt::format("n_heads ({}) must be divisible by n_kv_heads", m.i("n_heads")));
  }
  if (!m.null("ffn_hidden_dim")) m.positive("ffn_hidden_dim");
  m.non_negative("num_experts");
  if (m.i("num_experts") > 0) {
    m.positive("moe_top_k");
    m.require(m.i("moe_top_k") <= m.i("num_experts"), "moe_top_k",
              fmt::format("must be <= num_experts ({})", m.i("num_experts")));
    m.positive("moe_frequency");
    m.non_negative("moe_sequence_aux_loss_weight");
    m.positive("moe_expert_ffn_multiplier");
    m.non_negative("moe_router_z_loss_weight");
    m.non_negative("moe_capacity_factor");
    m.non_negative("moe_shared_experts");
  }
}

// The built-in schema's default of [section] key, a number.
double default_number(const char* section, const char* key) {
  for (const SectionSpec& spec : core_schema()) {
    if (spec.name == section) return spec.find(key)->default_value.as_number();
  }
  throw sdk::Error(fmt::format("the schema has no [{}] section", section));
}

// [train] loss_scale_*: GradScaler's ranges, and only with fp16 (no other precision scales its loss). A resolved
// config writes every default, so only another value is refused.
void check_loss_scale(const Section& t) {
  const bool fp16 = t.at("mixed_precision").s == "fp16";
  for (const char* k : {"loss_scale_init", "loss_scale_growth", "loss_scale_backoff", "loss_scale_growth_interval"}) {
    t.require(fp16 || t.f(k) == default_number("train", k), k,
              "dynamic loss scaling is for [train] mixed_precision = \"fp16\" only (this run's is \"" +
                  t.at("mixed_precision").s + "\"); remove the key or set mixed_precision = \"fp16\"");
  }
  t.positive("loss_scale_init");
  t.require(t.f("loss_scale_growth") > 1, "loss_scale_growth", "must be > 1");
  t.require(t.f("loss_scale_backoff") > 0 && t.f("loss_scale_backoff") < 1, "loss_scale_backoff",
            "must be in (0, 1)");
  t.positive("loss_scale_growth_interval");
}

void check_train(const Section& t) {
  for (const char* k : {"batch_size", "seq_len", "max_steps", "grad_accum_steps"}) t.positive(k);
  t.require(t.f("grad_clip_norm") > 0, "grad_clip_norm", "must be > 0 (clipping is always on)");
  t.non_negative("z_loss_weight");
  t.non_negative("ce_chunk_size");
  t.non_negative("shutdown_timeout_sec");
  t.non_negative("nccl_health_check_interval");
  t.positive("nccl_health_check_timeout_sec");
  t.non_negative("num_threads");
  t.positive("nan_max_consecutive");
  check_loss_scale(t);
  check_freeze_schedule(t);
}

void check_optimizer(const Section& o) {
  o.positive("lr");
  o.non_negative("weight_decay");
  o.positive("eps");
}

void check_scheduler(const Section& s) {
  s.non_negative("warmup_steps");
  s.require(s.f("min_lr_ratio") >= 0 && s.f("min_lr_ratio") <= 1, "min_lr_ratio", "must be in [0, 1]");
  if (!s.null("decay_steps")) s.non_negative("decay_steps");
}

void check_data(const Section& d) {
  d.non_negative("num_workers");
  d.require(d.i("prefetch_factor") >= 1, "prefetch_factor", "must be >= 1");
  d.require(d.i("hf_image_size") >= 1 && d.i("hf_image_size") <= 8192, "hf_image_size",
            "must be in [1, 8192] (the side, in pixels, of the square images a vision-language run trains on)");
  d.positive("mix_temperature");
  d.non_negative("anneal_start_step");
  d.positive("hf_streaming_shuffle_buffer");
  for (size_t k = 0; k < d.at("datasets").list.size(); ++k) {
    Section src{d.at("datasets").list[k], fmt::format("data.datasets[{}]", k)};
    src.require(!src.at("path").s.empty() || !src.at("hf_name").s.empty(), "path", "each dataset needs a path or an hf_name");
    src.require(src.at("path").s.empty() || src.at("hf_name").s.empty(), "hf_name",
                "a source reads either path (tokenised shards) or hf_name (a local JSON Lines export), not both");
    src.require(src.at("hf_config").s.empty() || !src.at("hf_name").s.empty(), "hf_config",
                "hf_config picks a subdirectory of an hf_name export: set hf_name too");
    src.require(src.f("weight") >= 0, "weight", "must be >= 0 (a source of weight 0 is never sampled)");
  }
  const Value& phases = d.at("phases");
  int64_t previous = -1;
  for (size_t k = 0; k < phases.list.size(); ++k) {
    Section p{phases.list[k], fmt::format("data.phases[{}]", k)};
    p.non_negative("start_step");
    p.require(p.i("start_step") > previous, "start_step", "phase start steps must be strictly increasing");
    previous = p.i("start_step");
    p.positive("lr_scale");
    for (const auto& [name, w] : p.at("dataset_weights").table) {
      p.require(w.as_number() >= 0, "dataset_weights", fmt::format("weight of '{}' must be >= 0", name));
    }
  }
  d.require(phases.list.empty() || d.i("anneal_start_step") == 0, "anneal_start_step",
            "phases and anneal_start_step are mutually exclusive: use phases for multi-phase scheduling");
}

// The Hugging Face exports ([data] hf_dataset_name, [eval] hf_dataset_name, [[data.datasets]] hf_name):
// each is the only data of its place, and names the text field (the run requires tokenizer_path, as
// KempnerForge's build does: train/hf_data.h).
void check_hf_exports(const Value& root) {
  const Section d = section(root, "data");
  const Section e = section(root, "eval");
  const char* either = "set one: dataset_path (tokenised shards) or hf_dataset_name (a local JSON Lines export)";
  d.require(d.null("hf_dataset_config") || !d.null("hf_dataset_name"), "hf_dataset_config",
            "hf_dataset_config picks a subdirectory of the hf_dataset_name export: set hf_dataset_name too");
  e.require(e.null("hf_dataset_config") || !e.null("hf_dataset_name"), "hf_dataset_config",
            "hf_dataset_config picks a subdirectory of the hf_dataset_name export: set hf_dataset_name too");
  bool exported = !d.null("hf_dataset_name") || !e.null("hf_dataset_name");
  if (!d.null("hf_dataset_name")) {
    d.require(d.at("dataset_path").s.empty(), "hf_dataset_name", either);
    d.require(d.at("datasets").list.empty(), "hf_dataset_name",
              "a mixture ([[data.datasets]]) names its sources' exports with hf_name: remove hf_dataset_name, or the "
              "[[data.datasets]]");
  }
  d.require(!d.at("hf_streaming").b || !d.null("hf_dataset_name"), "hf_streaming",
            "streams the [data] hf_dataset_name export: set hf_dataset_name (dataset_path shards and a mixture's "
            "hf_name sources are read whole, not streamed)");
  // A resolved config prints the default explicitly: only another size asks for a stream.
  d.require(d.at("hf_streaming").b || d.i("hf_streaming_shuffle_buffer") == 10000,
            "hf_streaming_shuffle_buffer", "sizes the shuffle buffer of a stream: set hf_streaming = true, or remove it");
  if (!e.null("hf_dataset_name")) e.require(e.at("dataset_path").s.empty(), "hf_dataset_name", either);
  for (const Value& src : d.at("datasets").list) exported = exported || !src.find("hf_name")->s.empty();
  if (!exported) return;
  d.require(!d.at("hf_dataset_text_field").s.empty(), "hf_dataset_text_field",
            "must name the JSON member that holds each document's text (e.g. \"text\")");
}

void check_checkpoint(const Section& c) {
  c.positive("interval");
  const Value& window = c.at("dyn_ckpt_window");
  if (!window.is_null()) {
    Section w{window, "checkpoint.dyn_ckpt_window"};
    w.non_negative("start");
    w.require(w.i("stop") >= w.i("start"), "stop", fmt::format("must be >= start ({})", w.i("start")));
  }
  for (const Value& item : c.at("exclude_from_loading").list) {
    c.require(item.s == "model" || item.s == "optimizer" || item.s == "train_state", "exclude_from_loading",
              "entries must be \"model\", \"optimizer\" or \"train_state\"");
  }
}

void check_distributed(const Section& d) {
  d.require(d.i("dp_shard") == -1 || d.i("dp_shard") > 0, "dp_shard", "must be -1 (auto) or > 0");
  for (const char* k : {"dp_replicate", "tp", "pp", "cp", "ep"}) d.require(d.i(k) >= 1, k, "must be >= 1");
  d.positive("nccl_timeout_sec");
}

void check_vision_encoder(const Section& v) {
  v.non_negative("feature_dim");
  v.non_negative("num_tokens");
}

void check_adapter(const Section& a) {
  a.non_negative("hidden_dim");
  a.positive("pool_window");
  a.positive("pool_heads");
}

// The base keys; each arch's own keys are its strategy's to check (its validation hook).
void check_vlm(const Section& v) {
  v.positive("max_text_len");
  v.positive("max_image_bytes");
  check_freeze_schedule(v);
}

void check_video(const Section& v) {
  v.non_negative("max_samples");
  v.require(v.i("min_frames") >= 1, "min_frames", "must be >= 1");
  v.require(v.i("max_frames") >= 1, "max_frames", "must be >= 1");
  v.require(v.i("min_frames") <= v.i("max_frames"), "min_frames",
            fmt::format("must be <= max_frames ({})", v.i("max_frames")));
  v.positive("fps");
  v.positive("frame_size");
  v.positive("max_clip_bytes");
}

void check_time_embedding(const Section& t) {
  t.require(t.i("num_bands") >= 1, "num_bands", "must be >= 1");
  t.positive("min_period");
  t.require(t.f("max_period") >= t.f("min_period"), "max_period",
            fmt::format("must be >= min_period ({})", t.f("min_period")));
}

int64_t isqrt(int64_t n) {
  int64_t r = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return r;
}

// Whether a selected component of `kind` declares the capability `flag`.
bool selected_with(const std::vector<ComponentKeys>& selected, const char* kind, uint32_t flag) {
  for (const ComponentKeys& c : selected) {
    if (c.kind == kind && (c.capabilities & flag) != 0) return true;
  }
  return false;
}

// Tokens out of the adapter for `n` encoder tokens: a projection keeps n; an adapter that pools the square patch
// grid (KFORGE_CAP_POOLS_PATCH_GRID) gives ceil(grid / window)^2.
int64_t adapter_output_tokens(const Section& adapter, const Section& encoder, bool pools) {
  const int64_t n = encoder.i("num_tokens");
  if (!pools) return n;
  const int64_t grid = isqrt(n);
  encoder.require(grid * grid == n, "num_tokens",
                  fmt::format("[adapter] type = \"{}\" pools a square patch grid: num_tokens must be a perfect square",
                              adapter.at("type").s));
  const int64_t window = adapter.i("pool_window");
  const int64_t side = (grid + window - 1) / window;
  return side * side;
}

// Residual-stream budget of a VLM with a known encoder token count: frames x adapter tokens of
// image tokens (none in the residual for a strategy whose residual holds the text only) plus max_text_len.
struct VlmBudget {
  int64_t residual_image_tokens = 0, max_text_len = 0;
  int64_t required() const { return residual_image_tokens + max_text_len; }
};

std::optional<VlmBudget> vlm_budget(const Value& root, const std::vector<ComponentKeys>& selected) {
  if (!has(root, "vlm") || !has(root, "vision_encoder")) return std::nullopt;
  const Section encoder = section(root, "vision_encoder");
  if (encoder.i("num_tokens") <= 0) return std::nullopt;  // probed at build time
  const Section vlm = section(root, "vlm");
  const int64_t frames = has(root, "video") ? section(root, "video").i("max_frames") : 1;
  const int64_t visual = frames * adapter_output_tokens(section(root, "adapter"), encoder,
                                                       selected_with(selected, sdk::kind::adapter,
                                                                     KFORGE_CAP_POOLS_PATCH_GRID));
  // A strategy whose residual stream holds the text only counts no image tokens.
  const bool text_residual = selected_with(selected, sdk::kind::modality_strategy, KFORGE_CAP_TEXT_RESIDUAL);
  return VlmBudget{text_residual ? 0 : visual, vlm.i("max_text_len")};
}

// JobConfig.__post_init__: what needs more than one section but not the world size.
void check_vlm_sections(const Value& root, const std::vector<ComponentKeys>& selected) {
  if (has(root, "vlm") && !has(root, "vision_encoder")) {
    fail_section(*root.find("vlm"),
                 "[vlm] is set but [vision_encoder] is missing; a VLM run requires a [vision_encoder] section");
  }
  if (has(root, "video") && !has(root, "vlm")) {
    fail_section(*root.find("video"),
                 "[video] is set but [vlm] is missing; video training runs through the VLM, so [vlm] (and "
                 "[vision_encoder]) are required");
  }
  if (has(root, "time_embedding") && section(root, "time_embedding").at("type").s != "none") {
    if (!has(root, "video")) {
      fail_section(*root.find("time_embedding"),
                   "[time_embedding] is set but [video] is missing; it embeds the time of each frame of a clip, so "
                   "only a video run has one (or set type = \"none\")");
    }
    section(root, "video")
        .require(section(root, "video").i("max_frames") >= 2, "max_frames",
                 "must be >= 2 with a [time_embedding] (a run of one frame per clip trains on "
                 "images, which have no time)");
  }
  if (const auto budget = vlm_budget(root, selected)) {
    const Section m = section(root, "model");
    m.require(m.i("max_seq_len") >= budget->required(), "max_seq_len",
              fmt::format("insufficient for the VLM: residual_image_tokens ({}) + vlm.max_text_len ({}) = {}",
                          budget->residual_image_tokens, budget->max_text_len, budget->required()));
  }
}

// The names a phase or the anneal weights give must be sources' names.
void check_weight_names(const Section& owner, const char* key, const std::set<std::string>& names,
                        const std::string& known) {
  for (const auto& [name, w] : owner.at(key).table) {
    owner.require(names.count(name) == 1, key,
                  fmt::format("'{}' is not the name of a [[data.datasets]] source (sources: {})", name, known));
  }
}

}  // namespace

void check_mixture(const Value& root) {
  const Section d = section(root, "data");
  const Value& sources = d.at("datasets");
  if (sources.list.empty()) {
    d.require(d.at("phases").list.empty(), "phases", "phases switch mixture weights: set [[data.datasets]] sources");
    d.require(d.i("anneal_start_step") == 0, "anneal_start_step",
              "annealing switches mixture weights: set [[data.datasets]] sources");
    return;
  }
  d.require(d.at("dataset_path").s.empty(), "dataset_path",
            "a mixture ([[data.datasets]]) reads its sources' paths: remove dataset_path, or the [[data.datasets]]");
  std::set<std::string> names;
  std::string known;
  double total = 0;
  for (size_t k = 0; k < sources.list.size(); ++k) {
    Section src{sources.list[k], fmt::format("data.datasets[{}]", k)};
    const std::string& path = src.at("path").s;
    const std::string name = dataset_source_name(path.empty() ? src.at("hf_name").s : path, src.at("name").s);
    src.require(names.insert(name).second, src.at("name").s.empty() ? "path" : "name",
                fmt::format("a second source named '{}' (the name defaults to the path's last component): give each "
                            "source a unique name",
                            name));
    known += (known.empty() ? "'" : ", '") + name + "'";
    total += src.f("weight");
  }
  d.require(total > 0, "datasets", "every source has weight 0: at least one weight must be > 0");
  for (size_t k = 0; k < d.at("phases").list.size(); ++k) {
    check_weight_names(Section{d.at("phases").list[k], fmt::format("data.phases[{}]", k)}, "dataset_weights", names,
                       known);
  }
  if (d.i("anneal_start_step") > 0) check_weight_names(d, "anneal_weights", names, known);
}

void check_sections(const Value& root, const std::vector<ComponentKeys>& selected) {
  check_model(section(root, "model"));
  check_train(section(root, "train"));
  check_optimizer(section(root, "optimizer"));
  check_scheduler(section(root, "scheduler"));
  check_data(section(root, "data"));
  check_hf_exports(root);
  const Section eval = section(root, "eval");
  eval.positive("interval");
  eval.positive("steps");
  eval.non_negative("task_limit");
  eval.non_negative("seed");
  section(root, "metrics").positive("log_interval");
  const Section prof = section(root, "profiling");
  prof.non_negative("start_step");
  prof.require(prof.i("end_step") > prof.i("start_step"), "end_step",
               fmt::format("must be > start_step ({})", prof.i("start_step")));
  check_checkpoint(section(root, "checkpoint"));
  check_distributed(section(root, "distributed"));
  if (has(root, "vision_encoder")) check_vision_encoder(section(root, "vision_encoder"));
  if (has(root, "adapter")) check_adapter(section(root, "adapter"));
  if (has(root, "vlm")) check_vlm(section(root, "vlm"));
  if (has(root, "video")) check_video(section(root, "video"));
  if (has(root, "time_embedding")) check_time_embedding(section(root, "time_embedding"));
  check_vlm_sections(root, selected);
}

namespace {

// The product of parallel degrees, or nullopt when it overflows an int64 (each degree is bounded,
// five of them together are not) or is not positive.
std::optional<int64_t> checked_product(std::initializer_list<int64_t> degrees) {
  int64_t product = 1;
  for (const int64_t degree : degrees) {
    if (__builtin_mul_overflow(product, degree, &product)) return std::nullopt;
  }
  return product >= 1 ? std::optional<int64_t>(product) : std::nullopt;
}

}  // namespace

void check_world(const Value& root, int world_size) {
  const Section d = section(root, "distributed");
  const Section m = section(root, "model");
  const Section t = section(root, "train");
  const std::string dims =
      fmt::format("dp_replicate={} x dp_shard={} x tp={} x pp={} x cp={} x ep={}", d.i("dp_replicate"), d.i("dp_shard"),
                  d.i("tp"), d.i("pp"), d.i("cp"), d.i("ep"));
  const std::optional<int64_t> fixed =
      checked_product({d.i("dp_replicate"), d.i("tp"), d.i("pp"), d.i("cp"), d.i("ep")});
  d.require(fixed.has_value(), "dp_replicate",
            fmt::format("Parallelism dimensions ({}) multiply to more than an int64 holds, so never to world_size ({})",
                        dims, world_size));
  if (d.i("dp_shard") == -1) {
    d.require(world_size % *fixed == 0, "dp_shard",
              fmt::format("auto dp_shard needs world_size ({}) divisible by dp_replicate*tp*pp*cp*ep ({})", world_size,
                          *fixed));
  } else {
    d.require(checked_product({*fixed, d.i("dp_shard")}) == world_size, "dp_shard",
              fmt::format("Parallelism dimensions ({}) do not match world_size ({})", dims, world_size));
  }
  t.require(t.i("seq_len") <= m.i("max_seq_len"), "seq_len",
            fmt::format("must be <= [model] max_seq_len ({})", m.i("max_seq_len")));
  if (m.at("tie_embeddings").b) {
    d.require(d.i("pp") == 1, "pp", "Tied embeddings are not supported with pipeline parallelism");
  }
  const Section e = section(root, "eval");
  if (e.at("enabled").b) {
    e.require(!e.at("dataset_path").s.empty() || !e.null("hf_dataset_name") || !e.at("tasks").list.empty(), "enabled",
              "eval is enabled but neither [eval] dataset_path nor hf_dataset_name is set (nor tasks, downstream "
              "tasks)");
  }
  if (d.i("tp") > 1) {
    d.require(m.i("n_heads") % d.i("tp") == 0, "tp", fmt::format("[model] n_heads ({}) must be divisible by tp", m.i("n_heads")));
    const int64_t kv = m.null("n_kv_heads") ? m.i("n_heads") : m.i("n_kv_heads");
    d.require(kv % d.i("tp") == 0, "tp", fmt::format("[model] n_kv_heads ({}) must be divisible by tp", kv));
    d.require(m.i("vocab_size") % d.i("tp") == 0, "tp",
              fmt::format("[model] vocab_size ({}) must be divisible by tp (each rank holds an equal slice of the "
                          "vocabulary; pad vocab_size up to a multiple)",
                          m.i("vocab_size")));
    d.require(t.at("mixed_precision").s != "fp8", "tp",
              "FP8 + Tensor Parallelism is not yet supported (FP8 linears do not compose with TP sharding)");
  }
  if (d.i("pp") > 1) {
    d.require(m.i("num_experts") == 0, "pp", "MoE + Pipeline Parallelism is not supported");
  }
  if (d.i("ep") > 1) {
    d.require(m.i("num_experts") > 0, "ep", "expert parallelism (ep > 1) needs an MoE model ([model] num_experts > 0)");
    d.require(m.i("num_experts") % d.i("ep") == 0, "ep",
              fmt::format("[model] num_experts ({}) must be divisible by ep", m.i("num_experts")));
  }
  if (d.i("cp") > 1) {
    // The mesh is (pp, dp_replicate, dp_shard, cp, ep, tp), tp fastest; the cp ranks share the parameters (or their
    // tp slices), so gradients reduce over dp_replicate x dp_shard x cp and FSDP shards over dp_shard x cp.
    for (const char* k : {"pp", "ep"}) {
      d.require(d.i(k) == 1, k,
                fmt::format("context parallelism (cp = {}) composes with data parallelism, FSDP and tensor "
                            "parallelism only; set {} = 1",
                            d.i("cp"), k));
    }
    d.require(m.i("num_experts") == 0, "cp",
              "context parallelism takes a dense model ([model] num_experts = 0): MoE routing losses are per rank's "
              "tokens");
    d.require(!has(root, "vlm"), "cp", "context parallelism splits token sequences; a vision-language run ([vlm]) "
                                       "cannot use it; set cp = 1");
    t.require(t.i("seq_len") % (2 * d.i("cp")) == 0, "seq_len",
              fmt::format("must be a multiple of 2 x [distributed] cp = {}: context parallelism cuts every sequence "
                          "into 2 x cp equal chunks",
                          2 * d.i("cp")));
  }
  // The host's VLM rules; each arch's shape against the text model is its strategy's to check (its validation hook).
  if (has(root, "vlm")) d.require(d.i("pp") == 1, "pp", "VLM + Pipeline Parallelism is not supported");
}

void check_sequence_budget(const Value& root, const std::vector<ComponentKeys>& selected) {
  if (const auto budget = vlm_budget(root, selected)) {
    const Section t = section(root, "train");
    t.require(t.i("seq_len") >= budget->required(), "seq_len",
              fmt::format("insufficient for the VLM: residual_image_tokens ({}) + vlm.max_text_len ({}) = {}",
                          budget->residual_image_tokens, budget->max_text_len, budget->required()));
  }
}

}  // namespace kforge::config
