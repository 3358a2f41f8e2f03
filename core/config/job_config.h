// JobConfig: the validated config, as typed structs for the host and section views for plugins.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/resolver.h"
#include "config/section_view.h"
#include "config/value.h"

namespace kforge::config {

struct TrainConfig {
  int64_t batch_size, seq_len, max_steps, grad_accum_steps;
  double grad_clip_norm;
  int64_t seed;
  std::optional<int64_t> data_seed;
  std::string mixed_precision, loss_fn;
  double shutdown_timeout_sec;
  std::string device;
  int64_t num_threads, nan_max_consecutive;
  std::vector<std::string> hooks;
  int64_t effective_data_seed() const { return data_seed.value_or(seed); }
};

/// A Hugging Face dataset exported to JSON Lines on local disk ([data] hf_dataset_name, [eval]
/// hf_dataset_name, a [[data.datasets]] source's hf_name), read through a token cache (train/hf_data.h).
struct HfExport {
  std::string name, config, split, text_field;  ///< config: "" for none; text_field: [data] hf_dataset_text_field
  std::string where;                            ///< for messages: "<file>:<line>: [data] hf_dataset_name = \"<name>\""
};

/// One [[data.datasets]] source of a mixture.
struct DatasetSource {
  std::string path, name;  ///< name: the configured one, else the last component of path (or of hf_name)
  double weight = 1.0;
  std::optional<HfExport> hf;  ///< hf_name (path is then unset)
};

/// One [[data.phases]] entry (anneal_start_step > 0 becomes one with lr_scale 1.0).
struct TrainingPhase {
  int64_t start_step = 0;
  std::vector<std::pair<std::string, double>> dataset_weights;  ///< by source name; unnamed sources keep theirs
  double lr_scale = 1.0;
};

struct DataConfig {
  std::string dataset_path, file_pattern, tokenizer_path, dataset_type;
  std::vector<DatasetSource> datasets;  ///< a mixture when non-empty (dataset_path is then unset)
  double mix_temperature = 1.0;
  std::vector<TrainingPhase> phases;  ///< sorted by start_step, anneal included
  std::optional<HfExport> hf;         ///< hf_dataset_name (dataset_path and datasets are then unset)
};

/// A mixture source's metric name: `name` when set, else the last component of `path`.
std::string dataset_source_name(const std::string& path, const std::string& name);

struct EvalConfig {
  bool enabled;
  int64_t interval, steps;
  std::string dataset_path, file_pattern;
  std::optional<HfExport> hf;  ///< hf_dataset_name (dataset_path is then unset)
};

struct DynamicWindow {
  int64_t start, stop;
  std::string strategy;
};

struct CheckpointConfig {
  std::string dir;
  int64_t interval, keep_last_n;
  std::optional<DynamicWindow> window;
  std::optional<std::string> load_path;
  std::vector<std::string> exclude_from_loading;
  /// KempnerForge's should_save: inside the window the strategy decides, else step % interval.
  bool should_save(int64_t step) const;
  /// Power-2 milestones inside the window are never pruned.
  bool is_milestone(int64_t step) const;
};

struct MetricsConfig {
  int64_t log_interval;
  std::vector<std::string> backends;
  std::string run_dir;
  double peak_tflops;
};

struct DistributedConfig {
  int64_t dp_shard, dp_replicate, tp, pp, cp, ep, timeout_sec;
};

struct ProfilingConfig {
  bool enable;
  int64_t start_step, end_step;
  std::string trace_dir;
};

struct JobConfig {
  Value tree;  ///< the whole resolved config
  std::filesystem::path file;
  std::vector<SectionSpec> schema;        ///< the schema it was resolved against (core and selected components' keys)
  std::vector<ComponentKeys> components;  ///< the components it selects, whose rules it keeps
  TrainConfig train;
  DataConfig data;
  EvalConfig eval;
  CheckpointConfig checkpoint;
  MetricsConfig metrics;
  DistributedConfig distributed;
  ProfilingConfig profiling;

  /// A view of one section for a plugin (lives as long as this JobConfig).
  SectionView view(const std::string& section) const;
  /// The resolved config as a TOML document.
  std::string to_toml() const;
};

/// Reads `file` (may be empty: defaults only), applies overrides, extends the schema with the
/// selected components' keys, resolves and validates every section. Throws sdk::ConfigError.
JobConfig load_job_config(const std::filesystem::path& file, const std::vector<std::string>& overrides,
                          const Catalog& catalog);

/// load_job_config's resolution and checks of a raw tree (read_raw_config's, or apply_overrides' of a tree built
/// elsewhere: the Python module's dicts); `file` is the one it came from, or empty.
JobConfig resolve_job_config(const Value& raw, const std::filesystem::path& file, const Catalog& catalog);

/// The rules that need the world size: kforge's (check_world) and the selected components'. Throws
/// sdk::ConfigError naming the source, key and value of the first broken one.
void check_world(const JobConfig& job, int world_size);

/// Builds the typed structs from an already resolved and checked tree.
JobConfig make_job_config(Value tree, std::filesystem::path file);

}  // namespace kforge::config
