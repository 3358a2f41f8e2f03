// Preflight: the checks of a run that need neither the model nor (unless a Hugging Face export is to be
// tokenised) a process group, shared by `kforge run` and `kforge run --dry-run`, so that the two refuse
// exactly the same configs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "data/mixture_dataset.h"
#include "feed/hf_data.h"
#include "kforge/sdk/dataset.h"
#include "plugins/components.h"

namespace kforge::train {

struct Preflight {
  std::vector<std::string> warnings;  ///< keys that have no effect here, each once; exports not tokenised yet
  /// Opened and checked (eval: when enabled); in the dry run, not the data of a Hugging Face export whose
  /// token cache is still to be written.
  std::unique_ptr<sdk::Dataset> train_data, eval_data;
  const data::MixtureDataset* mixture = nullptr;        ///< train_data, when [[data.datasets]] mixes sources
  int64_t eos_id = -1;  ///< [data] pack_sequences: the EOS id that splits windows into documents (packing.h)
};

/// In the order a run meets them: the keys this kforge does not implement, the world-size rules,
/// the precision, the mixture's names, and the training and eval data (opened; a Hugging Face
/// export through its token cache, which `hf_group`'s rank 0 writes when missing: hf_data.h).
/// Throws sdk::ConfigError for what the run must refuse, and data::DataError for data it cannot use (a shard that
/// cannot be read, a token id >= [model] vocab_size in any window of the training or eval data or a mixture source).
Preflight preflight(const config::JobConfig& job, const plugins::Components& components, int world_size,
                    const feed::HfCacheGroup& hf_group = {});

}  // namespace kforge::train
