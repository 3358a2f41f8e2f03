// Preflight: the checks of a run that need neither the model nor a process group, shared by
// `kforge run` and `kforge run --dry-run`, so that the two refuse exactly the same configs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "data/mixture_dataset.h"
#include "kforge/sdk/dataset.h"
#include "plugins/components.h"

namespace kforge::train {

struct Preflight {
  std::vector<std::string> warnings;                    ///< keys that have no effect here, each once
  std::unique_ptr<sdk::Dataset> train_data, eval_data;  ///< opened and checked (eval: when enabled)
  const data::MixtureDataset* mixture = nullptr;        ///< train_data, when [[data.datasets]] mixes sources
  int64_t eos_id = -1;  ///< [data] pack_sequences: the EOS id that splits windows into documents (packing.h)
};

/// In the order a run meets them: the keys this kforge does not implement, the world-size rules,
/// the precision, the mixture's names, and the training and eval data (opened).
/// Throws sdk::ConfigError for what the run must refuse.
Preflight preflight(const config::JobConfig& job, const plugins::Components& components, int world_size);

}  // namespace kforge::train
