#include "config/rules.h"

#include <fmt/format.h>

#include <set>

#include "kforge/sdk/error.h"

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
  void require(bool ok, const char* key, const std::string& message) const {
    if (ok) return;
    const Value& v = at(key);
    throw sdk::ConfigError(fmt::format("{}: [{}] {} = {}: {}", v.source.describe(), name, key, v.to_toml(), message));
  }
  void positive(const char* key) const { require(at(key).as_number() > 0, key, "must be > 0"); }
  void non_negative(const char* key) const { require(at(key).as_number() >= 0, key, "must be >= 0"); }
};

Section section(const Value& root, const char* name) { return Section{*root.find(name), name}; }

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

void check_train(const Section& t) {
  for (const char* k : {"batch_size", "seq_len", "max_steps", "grad_accum_steps"}) t.positive(k);
  t.require(t.f("grad_clip_norm") > 0, "grad_clip_norm", "must be > 0 (clipping is always on)");
  t.non_negative("z_loss_weight");
  t.non_negative("ce_chunk_size");
  t.non_negative("shutdown_timeout_sec");
  t.non_negative("nccl_health_check_interval");
  t.non_negative("num_threads");
  t.positive("nan_max_consecutive");
}

void check_optimizer(const Section& o) {
  o.positive("lr");
  o.non_negative("weight_decay");
  const Value& betas = o.at("betas");
  o.require(betas.list.size() == 2, "betas", "must be two numbers (beta1, beta2)");
  for (const Value& b : betas.list) o.require(b.as_number() >= 0 && b.as_number() < 1, "betas", "each beta must be in [0, 1)");
  o.positive("eps");
  o.require(o.f("muon_momentum") > 0 && o.f("muon_momentum") < 1, "muon_momentum", "must be in (0, 1)");
  o.positive("muon_ns_steps");
  if (!o.null("muon_adam_lr")) o.positive("muon_adam_lr");
  o.non_negative("schedule_free_warmup_steps");
}

void check_scheduler(const Section& s) {
  s.non_negative("warmup_steps");
  s.require(s.f("min_lr_ratio") >= 0 && s.f("min_lr_ratio") <= 1, "min_lr_ratio", "must be in [0, 1]");
  if (!s.null("decay_steps")) s.non_negative("decay_steps");
  if (!s.null("stable_steps")) s.non_negative("stable_steps");
  s.positive("rex_alpha");
}

void check_data(const Section& d) {
  d.non_negative("num_workers");
  d.require(d.i("prefetch_factor") >= 1, "prefetch_factor", "must be >= 1");
  d.positive("mix_temperature");
  d.non_negative("anneal_start_step");
  for (size_t k = 0; k < d.at("datasets").list.size(); ++k) {
    Section src{d.at("datasets").list[k], fmt::format("data.datasets[{}]", k)};
    src.require(!src.at("path").s.empty() || !src.at("hf_name").s.empty(), "path", "each dataset needs a path or an hf_name");
    src.positive("weight");
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

}  // namespace

void check_sections(const Value& root) {
  check_model(section(root, "model"));
  check_train(section(root, "train"));
  check_optimizer(section(root, "optimizer"));
  check_scheduler(section(root, "scheduler"));
  check_data(section(root, "data"));
  const Section eval = section(root, "eval");
  eval.positive("interval");
  eval.positive("steps");
  section(root, "metrics").positive("log_interval");
  const Section prof = section(root, "profiling");
  prof.non_negative("start_step");
  prof.require(prof.i("end_step") > prof.i("start_step"), "end_step",
               fmt::format("must be > start_step ({})", prof.i("start_step")));
  check_checkpoint(section(root, "checkpoint"));
  check_distributed(section(root, "distributed"));
}

void check_world(const Value& root, int world_size) {
  const Section d = section(root, "distributed");
  const Section m = section(root, "model");
  const Section t = section(root, "train");
  const int64_t fixed = d.i("dp_replicate") * d.i("tp") * d.i("pp") * d.i("cp") * d.i("ep");
  if (d.i("dp_shard") == -1) {
    d.require(world_size % fixed == 0, "dp_shard",
              fmt::format("auto dp_shard needs world_size ({}) divisible by dp_replicate*tp*pp*cp*ep ({})", world_size,
                          fixed));
  } else {
    d.require(fixed * d.i("dp_shard") == world_size, "dp_shard",
              fmt::format("Parallelism dimensions (dp_replicate={} x dp_shard={} x tp={} x pp={} x cp={} x ep={}) do "
                          "not match world_size ({})",
                          d.i("dp_replicate"), d.i("dp_shard"), d.i("tp"), d.i("pp"), d.i("cp"), d.i("ep"), world_size));
  }
  t.require(t.i("seq_len") <= m.i("max_seq_len"), "seq_len",
            fmt::format("must be <= [model] max_seq_len ({})", m.i("max_seq_len")));
  if (m.at("tie_embeddings").b) {
    d.require(d.i("pp") == 1, "pp", "Tied embeddings are not supported with pipeline parallelism");
  }
  const Section e = section(root, "eval");
  if (e.at("enabled").b) {
    e.require(!e.at("dataset_path").s.empty() || !e.null("hf_dataset_name"), "enabled",
              "eval is enabled but neither [eval] dataset_path nor hf_dataset_name is set");
  }
  if (d.i("tp") > 1) {
    d.require(m.i("n_heads") % d.i("tp") == 0, "tp", fmt::format("[model] n_heads ({}) must be divisible by tp", m.i("n_heads")));
    const int64_t kv = m.null("n_kv_heads") ? m.i("n_heads") : m.i("n_kv_heads");
    d.require(kv % d.i("tp") == 0, "tp", fmt::format("[model] n_kv_heads ({}) must be divisible by tp", kv));
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
}

}  // namespace kforge::config
