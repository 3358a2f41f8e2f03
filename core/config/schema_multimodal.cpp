// The multimodal sections of the schema: [vision_encoder], [adapter], [vlm], [video] and [time_embedding].
#include "config/schema_keys.h"
#include "config/schema_sections.h"

namespace kforge::config::schema_parts {

std::vector<SectionSpec> multimodal_sections() {
  std::vector<SectionSpec> s;
  s.push_back({"vision_encoder",
               {string_key("type", "random", "vision encoder plugin"),
                string_key("path", "", "Hugging Face id or local path of the encoder"),
                int_key("feature_dim", 0, "encoder feature width (0: probe the encoder)"),
                int_key("num_tokens", 0, "image tokens per image (0: probe the encoder)")},
               true,
               "the VLM's vision encoder (required by [vlm])"});
  SectionSpec adapter{"adapter",
                      {string_key("type", "mlp_2layer", "vision-to-text connector (adapter plugin)"),
                       int_key("hidden_dim", 0, "hidden width of a two-layer adapter (0: the model dim)"),
                       string_key("activation", "gelu", "activation of a two-layer adapter", {"gelu", "silu", "relu"}),
                       int_key("pool_window", 2, "window side of an adapter that pools the patch grid"),
                       int_key("pool_heads", 16, "attention heads of an attention-pooling adapter")},
                      true,
                      "the VLM's connector (defaults apply when [vlm] is set without it)"};
  adapter.implied_by = "vlm";
  s.push_back(std::move(adapter));
  s.push_back(vlm_section());
  s.push_back({"video",
               {string_key("data_root", "", "root directory of the video dataset"),
                string_key("dataset_type", "webvid", "video-text data reader (a video_dataset plugin)"),
                string_key("dataset_name", "webvid-10M", "corpus name under data_root"),
                string_key("sampling_policy", "uniform", "frame sampling policy (a frame_sampler plugin)"),
                string_key("split", "train", "split to read", {"train", "validation"}),
                int_key("max_samples", 0, "cap on clips read (0: all)"),
                int_key("max_frames", 16, "frames per clip (the visual-token budget)"),
                int_key("min_frames", 4, "fewest frames sampled per clip"),
                float_key("fps", 2.0, "sampling rate in frames per second"),
                int_key("frame_size", 224, "square frame size in pixels"),
                bounded(int_key("max_clip_bytes", int64_t{2} << 30, "largest video file read, in bytes (up to 4 GiB)"),
                        static_cast<double>((int64_t{1} << 32) - 1)),
                string_key("prompt", "", "instruction before the caption (masked from the loss)")},
               true,
               "video training through the VLM (requires [vlm])"});
  s.push_back({"time_embedding",
               {string_key("type", "none", "per-frame time embedding (a time_embedding plugin, or \"none\")"),
                int_key("num_bands", 16, "sinusoid bands (sinusoidal)"),
                float_key("min_period", 0.5, "shortest period in seconds (sinusoidal)"),
                float_key("max_period", 256.0, "longest period in seconds (sinusoidal)")},
               true,
               "each frame's time in its clip added to its visual tokens (requires [video])"});
  return s;
}

}  // namespace kforge::config::schema_parts
