#include "config/job_config.h"

#include <fmt/format.h>

#include "config/component_rules.h"
#include "config/rules.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

const Value& at(const Value& tree, const char* section, const char* key) { return *tree.find(section)->find(key); }

std::vector<std::string> strings(const Value& list) {
  std::vector<std::string> out;
  for (const Value& v : list.list) out.push_back(v.s);
  return out;
}

// The export `name_key` of `table` names (hf_dataset_name or hf_name; null or "" for none), with
// [data]'s text field and `split`; `spelled` is how messages name the table ("data.datasets[1]").
std::optional<HfExport> hf_export(const Value& table, const std::string& spelled, const char* name_key,
                                  const char* config_key, const std::string& split, const std::string& text_field) {
  const Value& name = *table.find(name_key);
  if (name.is_null() || name.s.empty()) return std::nullopt;
  const Value& config = *table.find(config_key);
  return HfExport{name.s, config.is_null() ? "" : config.s, split, text_field,
                  fmt::format("{}: [{}] {} = \"{}\"", name.source.describe(), spelled, name_key, name.s)};
}

// [[data.datasets]], mix_temperature, [[data.phases]] and the anneal shortcut (one phase, lr_scale 1).
void read_mixture(const Value& data, DataConfig& out) {
  const std::string& split = data.find("hf_dataset_split")->s;
  const std::string& text_field = data.find("hf_dataset_text_field")->s;
  const Value& sources = *data.find("datasets");
  for (size_t k = 0; k < sources.list.size(); ++k) {
    const Value& src = sources.list[k];
    std::optional<HfExport> hf =
        hf_export(src, fmt::format("data.datasets[{}]", k), "hf_name", "hf_config", split, text_field);
    const std::string& path = src.find("path")->s;
    out.datasets.push_back({path, dataset_source_name(hf ? hf->name : path, src.find("name")->s),
                            src.find("weight")->as_number(), std::move(hf)});
  }
  out.mix_temperature = data.find("mix_temperature")->as_number();
  auto weights = [](const Value& table) {
    std::vector<std::pair<std::string, double>> w;
    for (const auto& [name, v] : table.table) w.emplace_back(name, v.as_number());
    return w;
  };
  for (const Value& p : data.find("phases")->list) {
    out.phases.push_back(
        {p.find("start_step")->i, weights(*p.find("dataset_weights")), p.find("lr_scale")->as_number()});
  }
  if (const int64_t anneal = data.find("anneal_start_step")->i; anneal > 0) {
    out.phases.push_back({anneal, weights(*data.find("anneal_weights")), 1.0});
  }
}

bool is_power2_offset(int64_t offset) { return offset == 0 || (offset > 0 && (offset & (offset - 1)) == 0); }

}  // namespace

bool CheckpointConfig::is_milestone(int64_t step) const {
  return window && step >= window->start && step <= window->stop && is_power2_offset(step - window->start);
}

bool CheckpointConfig::should_save(int64_t step) const {
  if (window && step >= window->start && step <= window->stop) return is_milestone(step);
  return step % interval == 0;
}

std::string dataset_source_name(const std::string& path, const std::string& name) {
  if (!name.empty()) return name;
  std::filesystem::path p(path);
  if (!p.has_filename()) p = p.parent_path();  // "dir/" -> "dir"
  return p.filename().string();
}

SectionView JobConfig::view(const std::string& section) const {
  const Value* table = tree.find(section);
  if (table == nullptr) {
    throw sdk::ConfigError("[" + section + "] is not in this config (an optional section that was not set)");
  }
  return SectionView(section, *table);
}

std::string JobConfig::to_toml() const { return to_toml_document(tree); }

JobConfig make_job_config(Value tree, std::filesystem::path file) {
  JobConfig c;
  c.tree = std::move(tree);
  c.file = std::move(file);
  const Value& t = c.tree;
  auto i = [&](const char* s, const char* k) { return at(t, s, k).i; };
  auto f = [&](const char* s, const char* k) { return at(t, s, k).as_number(); };
  auto str = [&](const char* s, const char* k) { return at(t, s, k).s; };
  auto opt_i = [&](const char* s, const char* k) -> std::optional<int64_t> {
    const Value& v = at(t, s, k);
    return v.is_null() ? std::nullopt : std::optional<int64_t>(v.i);
  };

  c.train = TrainConfig{i("train", "batch_size"),           i("train", "seq_len"),           i("train", "max_steps"),
                        i("train", "grad_accum_steps"),     f("train", "grad_clip_norm"),    i("train", "seed"),
                        opt_i("train", "data_seed"),        str("train", "mixed_precision"), str("train", "loss_fn"),
                        f("train", "shutdown_timeout_sec"), str("train", "device"),          i("train", "num_threads"),
                        i("train", "nan_max_consecutive"),  strings(at(t, "train", "hooks"))};
  c.data = DataConfig{str("data", "dataset_path"), str("data", "file_pattern"), str("data", "tokenizer_path"),
                      str("data", "dataset_type")};
  read_mixture(*t.find("data"), c.data);
  const std::string& text_field = str("data", "hf_dataset_text_field");
  c.data.hf = hf_export(*t.find("data"), "data", "hf_dataset_name", "hf_dataset_config",
                        str("data", "hf_dataset_split"), text_field);
  c.eval = EvalConfig{at(t, "eval", "enabled").b,
                      i("eval", "interval"),
                      i("eval", "steps"),
                      str("eval", "dataset_path"),
                      str("eval", "file_pattern"),
                      hf_export(*t.find("eval"), "eval", "hf_dataset_name", "hf_dataset_config",
                                str("eval", "hf_dataset_split"), text_field)};
  const Value& window = at(t, "checkpoint", "dyn_ckpt_window");
  const Value& load_path = at(t, "checkpoint", "load_path");
  c.checkpoint = CheckpointConfig{
      str("checkpoint", "dir"),
      i("checkpoint", "interval"),
      i("checkpoint", "keep_last_n"),
      window.is_null() ? std::nullopt
                       : std::optional<DynamicWindow>(DynamicWindow{window.find("start")->i, window.find("stop")->i,
                                                                    window.find("strategy")->s}),
      load_path.is_null() ? std::nullopt : std::optional<std::string>(load_path.s),
      strings(at(t, "checkpoint", "exclude_from_loading"))};
  c.metrics = MetricsConfig{i("metrics", "log_interval"), strings(at(t, "metrics", "backends")),
                            str("metrics", "run_dir"), f("metrics", "peak_tflops")};
  if (c.metrics.run_dir.empty()) c.metrics.run_dir = c.checkpoint.dir;
  c.distributed = DistributedConfig{i("distributed", "dp_shard"), i("distributed", "dp_replicate"),
                                    i("distributed", "tp"),       i("distributed", "pp"),
                                    i("distributed", "cp"),       i("distributed", "ep"),
                                    i("distributed", "nccl_timeout_sec")};
  c.profiling = ProfilingConfig{at(t, "profiling", "enable").b, i("profiling", "start_step"),
                                i("profiling", "end_step"), str("profiling", "trace_dir")};
  return c;
}

JobConfig load_job_config(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                          const Catalog& catalog) {
  return resolve_job_config(read_raw_config(file, overrides), file, catalog);
}

JobConfig resolve_job_config(const Value& raw, const std::filesystem::path& file, const Catalog& catalog) {
  std::vector<SectionSpec> schema = effective_schema(raw, catalog);
  Value tree = resolve(raw, schema, catalog);
  std::vector<ComponentKeys> components;
  for (const ComponentKeys* c : selected_components(raw, catalog)) components.push_back(*c);
  check_sections(tree, components);
  check_component_rules(tree, components, 0);
  JobConfig job = make_job_config(std::move(tree), file);
  job.schema = std::move(schema);
  job.components = std::move(components);
  return job;
}

void check_world(const JobConfig& job, int world_size) {
  check_world(job.tree, world_size);
  check_sequence_budget(job.tree, job.components);
  check_component_rules(job.tree, job.components, world_size);
}

}  // namespace kforge::config
