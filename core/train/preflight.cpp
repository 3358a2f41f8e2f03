// preflight: the build-time checks of a run, without the model or a process group.
#include "train/preflight.h"

#include "config/rules.h"
#include "config/support_check.h"
#include "kforge/sdk/error.h"
#include "train/packing.h"
#include "train/precision.h"

namespace kforge::train {

Preflight preflight(const config::JobConfig& job, const plugins::Components& components, int world_size) {
  Preflight out;
  out.warnings = config::check_support(job.tree);
  config::check_world(job.tree, world_size);
  cpu_autocast_dtype(job.train.mixed_precision);  // refuses what the CPU cannot do
  // An optimizer checks its [optimizer] values (betas, Muon's, Schedule-Free's, a third party's)
  // when it is built: build it once over a stand-in, so the dry run refuses what the run would.
  components.check_optimizer_values();
  config::check_mixture(job.tree);
  if (!job.data.datasets.empty()) {
    std::vector<data::MixtureDataset::Source> sources;
    for (const config::DatasetSource& s : job.data.datasets) {
      sources.push_back({s.name, components.dataset(s.path, job.data.file_pattern)});
    }
    auto mixture = std::make_unique<data::MixtureDataset>(std::move(sources));
    out.mixture = mixture.get();
    out.train_data = std::move(mixture);
  } else if (job.data.dataset_path.empty()) {
    throw sdk::ConfigError(
        "[data] dataset_path is not set: point it at a directory of tokenised shards (make one with "
        "`kforge prepare-data --input FILE.txt --output DIR --train-tokenizer --vocab-size 8000`)");
  } else {
    out.train_data = components.dataset(job.data.dataset_path, job.data.file_pattern);
  }
  if (job.eval.enabled) out.eval_data = components.dataset(job.eval.dataset_path, job.eval.file_pattern);
  out.eos_id = packing_eos_id(job, components.model_capabilities());
  return out;
}

}  // namespace kforge::train
