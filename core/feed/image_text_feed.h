// ImageTextFeed: a vision-language run's training (or evaluation) batches. This rank's share of the image-text
// dataset, in the order of data::BatchSampler's epochs (shuffled per epoch for training, strided over the data-parallel
// ranks) and read ahead on the dataset's threads; its position (samples of that order consumed, skipped ones
// included) is what a checkpoint stores.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "config/job_config.h"
#include "data/batch.h"
#include "data/sampler.h"
#include "dist/group.h"
#include "feed/batch_feed.h"
#include "kforge/sdk/hook.h"
#include "kforge/sdk/image_text_dataset.h"
#include "plugins/components.h"

namespace kforge::feed {

class ImageTextFeed final : public BatchFeed, public BatchSource {
 public:
  /// Training data ([data] dataset_path and file_pattern, shuffled per epoch by the data seed) or evaluation data
  /// ([eval] dataset_path and file_pattern, in order).
  enum class Split { Train, Eval };

  /// Opens the [vlm] dataset plugin over the split's dataset_path (in training, or [data] hf_dataset_name:
  /// hf_image_text()) with the images `pixels` describes (in a video run, the [video] dataset_type plugin, its clips
  /// of [video] max_frames frames taken at the [video] sampling_policy's times), the text of [data] tokenizer_path
  /// padded to [vlm] max_text_len, [data] num_workers threads and prefetch_factor x num_workers batches read ahead
  /// from the first next_batch() on. Throws sdk::ConfigError naming
  /// the key without a dataset_path or a tokenizer_path. `dp` must outlive the feed. As a training feed: the model
  /// makes `visual_tokens` tokens of each image or real frame (step_metrics()), and `stop_on_signal` lets a shutdown
  /// signal end micro_batches() (a single process only: ranks could otherwise part, one in the step's collectives
  /// and one in the save's).
  ImageTextFeed(const config::JobConfig& job, const plugins::Components& components, const sdk::PixelFormat& pixels,
                const dist::Group& dp, Split split = Split::Train, int64_t visual_tokens = 0,
                bool stop_on_signal = false);
  ~ImageTextFeed();

  /// train.batch_size samples: pixel_values [B, 3, S, S] (clips: [B, F, 3, S, S] and frame_mask [B, F]), input_ids
  /// and labels [B, max_text_len]. Throws sdk::ConfigError naming the dataset when a whole pass over this rank's
  /// samples gave fewer usable ones than a batch (and, from the dataset, when too many in a row are unusable).
  data::Batch next_batch() override;
  void rewind() override { restore(0); }
  /// [train] grad_accum_steps batches. A shutdown signal while they are read (slow or bad data; with
  /// `stop_on_signal`) gives the step's samples back: none, and the feed at the step's first sample, so the checkpoint
  /// of the last step resumes exactly.
  std::vector<data::Batch> micro_batches(int64_t step, bool logged) override;
  /// metrics(batches, visual_tokens).
  sdk::MetricList step_metrics(const std::vector<data::Batch>& batches,
                               const std::vector<at::Tensor>& row_losses) override;
  /// The entry records sampler_position() and position() ("image_text_position").
  void save_position(nlohmann::json& entry, nlohmann::json& train_state, int64_t steps_drawn) const override;
  /// Another data-parallel size: the ranks together consumed the sum of their positions; each continues at its share
  /// of it (exact when no rank skipped an image and the sum divides). Throws sdk::Error for a checkpoint of a run
  /// that was not vision-language.
  void resume(const nlohmann::json& train_state, int64_t step) override;
  /// As next_batch(), but gives up once `stop()` is true before a sample (a shutdown signal): nullopt, and the
  /// samples taken for the batch are lost (restore() a position from before them).
  std::optional<data::Batch> next_batch_unless(const std::function<bool()>& stop);
  /// Samples of this rank's order consumed so far.
  int64_t position() const { return position_; }
  /// Where position() is in the sampler's terms, for the checkpoint's record (epoch, whole batches into it).
  data::BatchSampler::Position sampler_position() const;
  /// Continues at `position` of this rank's order (0: from the start again, as each evaluation does); the read-ahead
  /// restarts there at the next next_batch().
  void restore(int64_t position);
  /// Samples this rank skipped (undecodable images) since it started or resumed.
  int64_t skipped() const;
  std::string describe() const { return dataset_->describe(); }
  /// Per-step data metrics of `batches`, summed over the data-parallel ranks (a collective):
  /// data/text_tokens_trained (labels with a loss), data/visual_tokens (`visual_tokens` per image or real frame),
  /// data/images_skipped (so far; clips that could not be decoded in a video run), and data/wait_ms: the time
  /// next_batch() waited for samples over the steps since the previous call (the previous logged step), averaged over
  /// the ranks (near 0 once the read-ahead keeps up with training).
  sdk::MetricList metrics(const std::vector<data::Batch>& batches, int64_t visual_tokens);

 private:
  int64_t index_at(int64_t position);

  std::unique_ptr<sdk::VisualTextSource> dataset_;
  const dist::Group& dp_;
  int64_t batch_size_, micro_batches_, visual_tokens_;
  bool stop_on_signal_;
  data::BatchSampler order_;
  std::unique_ptr<sdk::ImageTextStream> stream_;  ///< from position_, opened by next_batch()
  int64_t position_ = 0;
  double wait_ms_ = 0;         ///< in next_batch() since the last metrics()
  int64_t cached_epoch_ = -1;  ///< of cached_, used by the stream's threads one call at a time
  std::vector<int64_t> cached_;
};

/// [data] hf_dataset_name of a vision-language run, read as KempnerForge's HuggingFaceVLMDataset reads it: the
/// split's Arrow files (hf_split_files: a save_to_disk directory, the `datasets` cache or the hub cache) and the
/// columns [data] hf_dataset_image_field, hf_dataset_text_field and hf_dataset_prompt_field. Throws sdk::ConfigError naming
/// the key when the split cannot be found or is not Arrow (JSON Lines and Parquet hold no images kforge reads).
sdk::HfImageText hf_image_text(const config::JobConfig& job);

/// The split's dataset_path ([data] or [eval]); sdk::ConfigError naming the key when it is not set.
const std::string& image_text_path(const config::JobConfig& job, ImageTextFeed::Split split);

}  // namespace kforge::feed
