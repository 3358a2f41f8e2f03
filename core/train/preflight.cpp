// preflight: the build-time checks of a run, without the model (and a process group only to tokenise a
// Hugging Face export).
#include "train/preflight.h"

#include <fmt/format.h>

#include "config/rules.h"
#include "config/support_check.h"
#include "kforge/sdk/error.h"
#include "train/packing.h"
#include "train/precision.h"

namespace kforge::train {

Preflight preflight(const config::JobConfig& job, const plugins::Components& components, int world_size,
                    const HfCacheGroup& hf_group) {
  Preflight out;
  out.warnings = config::check_support(job.tree);
  config::check_world(job.tree, world_size);
  cpu_autocast_dtype(job.train.mixed_precision);  // refuses what the CPU cannot do
  // An optimizer checks its [optimizer] values (betas, Muon's, Schedule-Free's, a third party's)
  // when it is built: build it once over a stand-in, so the dry run refuses what the run would.
  components.check_optimizer_values();
  config::check_mixture(job.tree);
  // Shards in `path`, or a Hugging Face export's token cache; null (the dry run) while that is not written.
  const auto open = [&](const std::string& path, const std::string& pattern,
                        const std::optional<config::HfExport>& hf) -> std::unique_ptr<sdk::Dataset> {
    if (!hf) return components.dataset(path, pattern);
    const std::optional<ShardDir> cache = hf_shards(job, *hf, hf_group);
    if (!cache) {
      out.warnings.push_back(
          fmt::format("{}: not tokenised yet: the run tokenises it into its token cache first", hf->where));
      return nullptr;
    }
    return components.dataset(cache->dir, cache->pattern);
  };
  if (!job.data.datasets.empty()) {
    std::vector<data::MixtureDataset::Source> sources;
    for (const config::DatasetSource& s : job.data.datasets) {
      if (auto dataset = open(s.path, job.data.file_pattern, s.hf)) sources.push_back({s.name, std::move(dataset)});
    }
    if (sources.size() == job.data.datasets.size()) {
      auto mixture = std::make_unique<data::MixtureDataset>(std::move(sources));
      out.mixture = mixture.get();
      out.train_data = std::move(mixture);
    }
  } else if (job.data.dataset_path.empty() && !job.data.hf) {
    throw sdk::ConfigError(
        "[data] dataset_path is not set: point it at a directory of tokenised shards (make one with "
        "`kforge prepare-data --input FILE.txt --output DIR --train-tokenizer --vocab-size 8000`), or set "
        "hf_dataset_name to a Hugging Face dataset exported to JSON Lines");
  } else {
    out.train_data = open(job.data.dataset_path, job.data.file_pattern, job.data.hf);
  }
  if (job.eval.enabled) out.eval_data = open(job.eval.dataset_path, job.eval.file_pattern, job.eval.hf);
  out.eos_id = packing_eos_id(job, components.model_capabilities());
  return out;
}

}  // namespace kforge::train
