// MixtureFeed: the trainer's side of a data mixture ([[data.datasets]]): this rank's micro-batches
// from the global sample stream, the phases' learning-rate scale, the per-source metrics and the
// position a checkpoint keeps.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <vector>

#include "config/job_config.h"
#include "data/batch.h"
#include "data/mixture_dataset.h"
#include "data/mixture_sampler.h"
#include "dist/group.h"
#include "feed/batch_feed.h"
#include "kforge/sdk/metric_backend.h"

namespace kforge::feed {

/// The sampler's phases from the config: phase 0 is [[data.datasets]]' weights from step 0; each
/// [[data.phases]] entry (and the anneal shortcut) replaces the weights of the sources it names,
/// the others keep their configured weight.
std::vector<data::MixturePhase> mixture_phases(const config::DataConfig& data);

/// float64 [B]: each row's mean cross-entropy over its labelled positions (label != -100) from
/// logits [B, S, V] (detached, computed in fp32). With a `vocab` group (tensor parallelism), the logits are this
/// rank's slice of the vocabulary, columns [r*V, (r+1)*V) (collective over it).
at::Tensor row_cross_entropy(const at::Tensor& logits, const at::Tensor& labels, const dist::Group* vocab = nullptr);

class MixtureFeed final : public BatchFeed {
 public:
  /// `data` and `dp` must outlive the feed; `vocab_size` and `eos_id` as for data::make_batch.
  MixtureFeed(const config::JobConfig& job, const data::MixtureDataset& data, const dist::Group& dp, int64_t vocab_size,
              int64_t eos_id);

  /// The step's micro-batches for this rank: each global micro-batch is the next batch_size x
  /// dp-size samples of the stream, of which data-parallel rank r takes rows [r*B, (r+1)*B). Logs
  /// when a phase starts (or is the one a resumed run continues in). On a `logged` step each batch carries its
  /// rows' sources (Batch::sources), for which the step computes the row losses of loss/<name>.
  std::vector<data::Batch> micro_batches(int64_t step, bool logged) override;
  /// The learning-rate multiplier of the phase active at `step`.
  double lr_scale(int64_t step) const override;
  /// Collective over dp: data/<name>/tokens (tokens drawn from the source since the start, all
  /// ranks) and loss/<name> (mean of the step's row losses of the source over all ranks; absent
  /// for a source no row came from). `row_losses`: per micro-batch, row_cross_entropy's [B].
  sdk::MetricList step_metrics(const std::vector<data::Batch>& batches,
                               const std::vector<at::Tensor>& row_losses) override;
  /// The order is global: the entry records the batches each rank drew (grad_accum_steps per step drawn), and
  /// train_state.mixture the sampler's state().
  void save_position(nlohmann::json& entry, nlohmann::json& train_state, int64_t steps_drawn) const override;
  /// restore() of train_state.mixture; a checkpoint without one (written by another feed) starts the order afresh,
  /// with a warning.
  void resume(const nlohmann::json& train_state, int64_t step) override;

  /// {"samples", "sources": [{"name", "windows", "draws"}]}: the same on every rank.
  nlohmann::json state() const;
  /// Throws sdk::Error when the checkpoint mixed other sources (names or sizes).
  void restore(const nlohmann::json& state);

 private:
  const data::MixtureDataset& data_;
  const dist::Group& dp_;
  int64_t batch_size_, grad_accum_, seq_len_, vocab_size_, eos_id_;
  data::MixtureSampler sampler_;
  size_t logged_phase_ = SIZE_MAX;
};

}  // namespace kforge::feed
