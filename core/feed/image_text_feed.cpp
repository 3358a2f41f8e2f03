// ImageTextFeed: the [vlm] dataset plugin's stream in the sampler's order, stacked into batches.
#include "feed/image_text_feed.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <chrono>
#include <limits>

#include "data/tokenizer.h"
#include "feed/hf_data.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "resilience/shutdown.h"

namespace kforge::feed {
namespace {

// The section of the split's data: [data] for training, [eval] for evaluation.
const char* section_of(ImageTextFeed::Split split) { return split == ImageTextFeed::Split::Train ? "data" : "eval"; }

}  // namespace

const std::string& image_text_path(const config::JobConfig& job, ImageTextFeed::Split split) {
  const bool train = split == ImageTextFeed::Split::Train;
  const std::string& path = train ? job.data.dataset_path : job.eval.dataset_path;
  if (path.empty()) {
    throw sdk::ConfigError(fmt::format(
        "[{}] dataset_path is not set: a vision-language run {} a directory of WebDataset .tar shards (with "
        "[{}] file_pattern = \"*.tar\") or a JSON Lines manifest of {{\"image\", \"text\", \"prompt\"}} lines",
        section_of(split), train ? "trains on" : "evaluates on", section_of(split)));
  }
  return path;
}

sdk::HfImageText hf_image_text(const config::JobConfig& job) {
  const config::HfExport& hf = *job.data.hf;
  const config::SectionView data = job.view("data");
  sdk::HfImageText out;
  for (const std::filesystem::path& file : hf_split_files(hf)) {
    if (file.extension() != ".arrow") {
      throw sdk::ConfigError(fmt::format(
          "{}: '{}' is not an Arrow file: a vision-language run reads a Hugging Face image-text dataset from Arrow "
          "files (a save_to_disk directory, or the `datasets` cache), whose Image column holds the images",
          hf.where, file.string()));
    }
    out.files.push_back(file.string());
  }
  out.image_field = data.get_string("hf_dataset_image_field");
  out.text_field = hf.text_field;
  out.prompt_field = data.get_string("hf_dataset_prompt_field");
  out.where = hf.where;
  return out;
}

namespace {

// The spec of the split's samples: images from the split's dataset_path, or in a video run ([video]) clips, which the
// [video] dataset_type plugin finds from its own keys in training and at [eval] dataset_path in evaluation, taken at
// the times the [video] sampling_policy gives.
sdk::ImageTextSpec image_text_spec(const config::JobConfig& job, const plugins::Components& components,
                                   const sdk::PixelFormat& pixels, ImageTextFeed::Split split) {
  const bool video = job.tree.find("video") != nullptr;
  const bool train = split == ImageTextFeed::Split::Train;
  const bool hf = train && job.data.hf.has_value();  // [data] hf_dataset_name, in place of dataset_path
  const std::string path = (video && train) || hf ? "" : image_text_path(job, split);
  if (job.data.tokenizer_path.empty()) {
    throw sdk::ConfigError(
        "[data] tokenizer_path is not set: a vision-language run tokenises its captions and prompts as it reads "
        "them; point it at a SentencePiece .model, a tokenizer.json or a .tiktoken file");
  }
  auto tokenizer = std::make_shared<const data::Tokenizer>(job.data.tokenizer_path);
  log::get().info("tokenizer: loaded {} as {}", tokenizer->path().string(), tokenizer->describe());
  const config::SectionView data = job.view("data");
  sdk::ImageTextSpec spec;
  spec.path = path;
  spec.section = section_of(split);
  // file_pattern's default ("*.npy") selects token shards: unless set, the plugin picks its own.
  const config::Value* pattern = job.tree.find(section_of(split))->find("file_pattern");
  spec.file_pattern = pattern != nullptr && !pattern->source.origin.empty() ? pattern->s : "";
  if (hf) spec.hf = hf_image_text(job);
  spec.image_size = pixels.image_size;
  spec.pixels = pixels;
  spec.max_text_len = job.view("vlm").get_int("max_text_len");
  // KempnerForge pads with the pad id, else EOS, else 0; the caption ends with EOS so that generation stops.
  spec.eos_id = tokenizer->eos_id();
  spec.pad_id = tokenizer->pad_id() >= 0 ? tokenizer->pad_id() : std::max(tokenizer->eos_id(), 0);
  spec.tokenize = [tokenizer](std::string_view text) {
    const std::vector<int> ids = tokenizer->encode(text);
    return std::vector<int64_t>(ids.begin(), ids.end());
  };
  spec.num_workers = static_cast<int>(data.get_int("num_workers"));
  // Samples read ahead; each is decoded and held, so a product that asks for millions is a mistake, not a setting.
  const int64_t ahead = data.get_int("prefetch_factor") * spec.num_workers * job.train.batch_size;
  constexpr int64_t kMaxAhead = int64_t{1} << 20;
  if (ahead > kMaxAhead) {
    throw sdk::ConfigError(fmt::format(
        "[data] prefetch_factor {} x num_workers {} x [train] batch_size {} = {} samples read ahead, more than {}: "
        "lower prefetch_factor or num_workers",
        data.get_int("prefetch_factor"), spec.num_workers, job.train.batch_size, ahead, kMaxAhead));
  }
  spec.queue_depth = static_cast<int>(ahead);
  spec.warn = [](const std::string& message) { log::get().warn("{}", message); };
  if (video) {
    spec.max_frames = job.view("video").get_int("max_frames");
    std::shared_ptr<const sdk::FrameSampler> sampler = components.frame_sampler();
    spec.frame_times = [sampler](double duration_s) { return sampler->timestamps(duration_s); };
  }
  return spec;
}

std::unique_ptr<sdk::VisualTextSource> open_source(const config::JobConfig& job, const plugins::Components& components,
                                                   const sdk::ImageTextSpec& spec) {
  if (job.tree.find("video") != nullptr) return components.video_dataset(spec);
  return components.image_text_dataset(spec);
}

}  // namespace

ImageTextFeed::ImageTextFeed(const config::JobConfig& job, const plugins::Components& components,
                             const sdk::PixelFormat& pixels, const dist::Group& dp, Split split,
                             int64_t visual_tokens, bool stop_on_signal)
    : dataset_(open_source(job, components, image_text_spec(job, components, pixels, split))),
      dp_(dp),
      batch_size_(job.train.batch_size),
      micro_batches_(job.train.grad_accum_steps),
      visual_tokens_(visual_tokens),
      stop_on_signal_(stop_on_signal),
      order_(dataset_->size(), job.train.batch_size, split == Split::Train ? job.train.effective_data_seed() : 0,
             dp.rank(), dp.size(), /*shuffle=*/split == Split::Train) {}

ImageTextFeed::~ImageTextFeed() { stream_.reset(); }  // its threads read the order, destroyed after it

int64_t ImageTextFeed::index_at(int64_t position) {
  const int64_t epoch = position / order_.samples_per_rank();
  if (epoch != cached_epoch_) {
    cached_ = order_.epoch_indices(epoch);
    cached_epoch_ = epoch;
  }
  return cached_[static_cast<size_t>(position % order_.samples_per_rank())];
}

data::BatchSampler::Position ImageTextFeed::sampler_position() const {
  const int64_t per_epoch = order_.samples_per_rank();
  return {position_ / per_epoch, position_ % per_epoch / batch_size_};
}

void ImageTextFeed::restore(int64_t position) {
  if (position < 0) throw sdk::Error(fmt::format("cannot resume the image-text data at position {}", position));
  stream_.reset();  // its threads stop before the order they read changes
  position_ = position;
}

int64_t ImageTextFeed::skipped() const { return stream_ ? stream_->skipped() : 0; }

data::Batch ImageTextFeed::next_batch() {
  return *next_batch_unless([] { return false; });
}

std::optional<data::Batch> ImageTextFeed::next_batch_unless(const std::function<bool()>& stop) {
  if (!stream_) {  // opened on first use, at the position restore() set: nothing read ahead is thrown away
    stream_ =
        dataset_->stream([this](int64_t p) { return index_at(p); }, position_, std::numeric_limits<int64_t>::max());
  }
  const int64_t first = position_;
  std::vector<at::Tensor> pixels, ids, labels, masks, times;
  while (static_cast<int64_t>(pixels.size()) < batch_size_) {
    if (stop()) return std::nullopt;
    const auto start = std::chrono::steady_clock::now();
    std::optional<sdk::ImageTextSample> sample = stream_->next();
    wait_ms_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!sample) throw sdk::Error("the image-text stream ended before the end of training");
    // Positions [first, first + samples_per_rank) are a whole pass over this rank's samples.
    if (sample->position >= first + order_.samples_per_rank()) {
      throw sdk::ConfigError(fmt::format(
          "{}: a whole pass over this rank's {} samples gave {} usable, fewer than [train] batch_size = {} (the "
          "warnings above name the unusable ones); fix or replace the data",
          dataset_->describe(), order_.samples_per_rank(), pixels.size(), batch_size_));
    }
    position_ = sample->position + 1;
    pixels.push_back(std::move(sample->pixel_values));
    ids.push_back(std::move(sample->input_ids));
    labels.push_back(std::move(sample->labels));
    if (sample->frame_mask.defined()) masks.push_back(std::move(sample->frame_mask));
    if (sample->frame_times.defined()) times.push_back(std::move(sample->frame_times));
  }
  data::Batch batch;
  batch.pixel_values = at::stack(pixels);
  batch.input_ids = at::stack(ids);
  batch.labels = at::stack(labels);
  if (!masks.empty()) batch.frame_mask = at::stack(masks);
  if (!times.empty()) batch.frame_times = at::stack(times);
  return batch;
}

std::vector<data::Batch> ImageTextFeed::micro_batches(int64_t /*step*/, bool /*logged*/) {
  const int64_t step_start = position_;
  std::vector<data::Batch> batches;
  for (int64_t k = 0; k < micro_batches_; ++k) {
    std::optional<data::Batch> batch =
        next_batch_unless([this] { return stop_on_signal_ && resilience::shutdown_requested(); });
    if (!batch) {
      restore(step_start);
      return {};
    }
    batches.push_back(std::move(*batch));
  }
  return batches;
}

sdk::MetricList ImageTextFeed::step_metrics(const std::vector<data::Batch>& batches,
                                            const std::vector<at::Tensor>& /*row_losses*/) {
  return metrics(batches, visual_tokens_);
}

void ImageTextFeed::save_position(nlohmann::json& entry, nlohmann::json& /*train_state*/,
                                  int64_t /*steps_drawn*/) const {
  const data::BatchSampler::Position position = sampler_position();
  entry["epoch"] = position.epoch;
  entry["batches_yielded"] = position.batches_yielded;
  entry["image_text_position"] = position_;
}

void ImageTextFeed::resume(const nlohmann::json& ts, int64_t /*step*/) {
  const auto& entries = ts.at("data");
  auto saved = [](const nlohmann::json& entry) {
    if (!entry.contains("image_text_position")) {
      throw sdk::Error("the checkpoint holds no image-text data position: it was not written by a vision-language run");
    }
    return entry.at("image_text_position").get<int64_t>();
  };
  if (static_cast<int64_t>(entries.size()) == dp_.size()) {
    for (const auto& entry : entries) {
      if (entry.at("rank").get<int64_t>() == dp_.rank()) return restore(saved(entry));
    }
  }
  int64_t total = 0;
  for (const auto& entry : entries) total += saved(entry);
  log::get().info(
      "image-text data order re-derived for {} data-parallel ranks (checkpoint had {}): {} samples consumed",
      dp_.size(), entries.size(), total);
  restore(total / dp_.size());
}

sdk::MetricList ImageTextFeed::metrics(const std::vector<data::Batch>& batches, int64_t visual_tokens) {
  double text = 0, images = 0;
  for (const data::Batch& b : batches) {
    text += static_cast<double>(b.labels.ne(-100).sum().item<int64_t>());
    images += static_cast<double>(b.frame_mask.defined() ? b.frame_mask.sum().item<int64_t>() : b.pixel_values.size(0));
  }
  at::Tensor sums = at::tensor(
      {text, images * static_cast<double>(visual_tokens), static_cast<double>(skipped()), wait_ms_}, at::kDouble);
  wait_ms_ = 0;
  dp_.all_reduce(sums);
  const double* s = sums.data_ptr<double>();
  return {{"data/text_tokens_trained", s[0]},
          {"data/visual_tokens", s[1]},
          {"data/images_skipped", s[2]},
          {"data/wait_ms", s[3] / dp_.size()}};
}

}  // namespace kforge::feed
