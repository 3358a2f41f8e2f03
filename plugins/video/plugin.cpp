// The built-in video plugin: registers the video datasets webvid and video_jsonl (kind video_dataset, selected by
// [video] dataset_type), the frame sampler uniform (kind frame_sampler, selected by [video] sampling_policy) and the
// time embedding sinusoidal (kind time_embedding, selected by [time_embedding] type), each reading the keys it
// declares.
#include <kforge/sdk/plugin.h>

#include "video/sinusoidal_time_embedding.h"
#include "video/uniform_sampler.h"
#include "video/video_data.h"

namespace {

using kforge::sdk::reads;

// The [video] keys each component reads (list-plugins shows them); frame size and max_frames reach the datasets
// through the host's ImageTextSpec.
constexpr kforge_config_key kWebVidKeys[] = {
    reads("data_root"), reads("dataset_name"), reads("split"), reads("max_samples"), reads("prompt"),
    reads("max_clip_bytes"),
};
constexpr kforge_config_key kVideoJsonlKeys[] = {
    reads("data_root"), reads("max_samples"), reads("prompt"), reads("max_clip_bytes"),
};
constexpr kforge_config_key kUniformKeys[] = {reads("fps"), reads("min_frames"), reads("max_frames")};
constexpr kforge_config_key kSinusoidalKeys[] = {reads("num_bands"), reads("min_period"), reads("max_period")};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::video_dataset, "webvid", "1.0.0",
                     "KempnerForge's WebVid layout: CSV partitions under data_root/raw/<dataset_name>, clips under "
                     "data_root/raw/videos (evaluation: the validation split under [eval] dataset_path), decoded "
                     "with FFmpeg on [data] num_workers threads",
                     kforge::sdk::config_keys(kWebVidKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::video_dataset, "video_jsonl", "1.0.0",
                     "A JSON Lines manifest at data_root (evaluation: at [eval] dataset_path) of {\"video\", "
                     "\"text\", \"prompt\"} objects, decoded with FFmpeg on [data] num_workers threads",
                     kforge::sdk::config_keys(kVideoJsonlKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::frame_sampler, "uniform", "1.0.0",
                     "KempnerForge's uniform policy: clamp(round(duration x fps), min_frames, max_frames) frames "
                     "evenly spaced from the first to the last",
                     kforge::sdk::config_keys(kUniformKeys)),
    KFORGE_COMPONENT(kforge::sdk::kind::time_embedding, "sinusoidal", "1.0.0",
                     "Sines and cosines of each frame's time at num_bands periods log-spaced from min_period to "
                     "max_period seconds, through a zero-initialised projection added to the frame's visual tokens",
                     kforge::sdk::config_keys(kSinusoidalKeys)),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_video_dataset("webvid", [](const kforge::sdk::BuildContext& ctx, const kforge::sdk::ImageTextSpec& spec) {
    return kforge::video::make_webvid(ctx.section, spec);
  });
  r.add_video_dataset("video_jsonl", [](const kforge::sdk::BuildContext& ctx, const kforge::sdk::ImageTextSpec& spec) {
    return kforge::video::make_video_jsonl(ctx.section, spec);
  });
  r.add_frame_sampler(
      "uniform", [](const kforge::sdk::BuildContext& ctx) { return kforge::video::make_uniform_sampler(ctx.section); });
  r.add_time_embedding("sinusoidal",
                       [](const kforge::sdk::BuildContext& ctx, const kforge::sdk::TimeEmbeddingSpec& spec) {
                         return kforge::video::make_sinusoidal_time_embedding(ctx.section, spec);
                       });
}

}  // namespace

KFORGE_PLUGIN("kforge-video", "1.0.0", "Built-in video datasets, frame samplers and time embeddings", kComponents,
              register_all)
