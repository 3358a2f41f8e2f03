// Clips per second and frames per second of the video data path (the video_jsonl dataset: manifest, FFmpeg decode
// at the uniform sampler's times, scale, normalise, pad, tokenise) through its decode pool on 0..N worker threads,
// and the per-clip time of ClipDecoder alone on one thread. A measurement, not a test.
//
// Usage: bench_video [--clips N] [--passes P] [--threads T] [--size S] [--norm clip|siglip]
//   --clips N:   H.264 MP4 clips made by the ffmpeg CLI (320x240 testsrc at 24 fps, 2..8 s) in a temporary directory,
//                removed at the end (default 24)
//   --passes P:  streams over all clips per worker count; the median pass is reported (default 5)
//   --threads T: the most workers (default: std::thread::hardware_concurrency())
//   --size S:    [video] frame_size (default 224); fps 2, min_frames 4, max_frames 8 as the [video] section says
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config/section_view.h"
#include "config/value.h"
#include "image_text_io/image_transform.h"
#include "kforge/sdk/image_text_dataset.h"
#include "video/clip_decoder.h"
#include "video/uniform_sampler.h"
#include "video/video_data.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kWidth = 320;
constexpr int kHeight = 240;
constexpr int kRate = 24;
constexpr int kShortest = 2;  // seconds; clip i lasts kShortest + i % (kLongest - kShortest + 1)
constexpr int kLongest = 8;
constexpr int64_t kMaxFrames = 8;
constexpr int64_t kMinFrames = 4;
constexpr double kFps = 2.0;
constexpr int64_t kTextLen = 64;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct BenchArgs {
  int clips = 24;
  int passes = 5;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int64_t size = 224;
  std::string norm = "clip";
};

BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs a;
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (i + 1 >= argc) throw std::runtime_error("option " + key + " needs a value");
    const std::string value = argv[i + 1];
    if (key == "--clips")
      a.clips = std::stoi(value);
    else if (key == "--passes")
      a.passes = std::stoi(value);
    else if (key == "--threads")
      a.threads = std::stoi(value);
    else if (key == "--size")
      a.size = std::stoll(value);
    else if (key == "--norm")
      a.norm = value;
    else
      throw std::runtime_error("unknown option " + key + " (see the usage at the top of benchmarks/video_decode.cpp)");
  }
  if (a.clips < 1 || a.passes < 1 || a.threads < 1 || a.size < 1) {
    throw std::runtime_error("--clips, --passes, --threads and --size must be >= 1");
  }
  if (a.norm != "clip" && a.norm != "siglip") throw std::runtime_error("--norm is clip or siglip, not " + a.norm);
  return a;
}

// "model name" (x86) or "Model"/"CPU part" (Arm) of /proc/cpuinfo.
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string fallback;
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    key.erase(key.find_last_not_of(" \t") + 1);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (key == "model name" && !value.empty()) return value;
    if ((key == "Model" || key == "CPU part") && fallback.empty()) fallback = value;
  }
  return fallback.empty() ? "unknown CPU" : fallback;
}

// The temporary directory of the clips, removed however main ends.
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ignored;
    if (!path.empty()) fs::remove_all(path, ignored);
  }
};

int clip_seconds(int i) { return kShortest + i % (kLongest - kShortest + 1); }

// Writes the clips with the ffmpeg CLI, `threads` at a time.
std::vector<std::string> write_clips(const fs::path& dir, int count, int threads) {
  std::vector<std::string> paths(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) paths[i] = (dir / fmt::format("clip_{:03d}.mp4", i)).string();
  std::atomic<int> next{0};
  std::mutex failure_lock;
  std::string failure;
  const auto work = [&] {
    for (int i = next++; i < count; i = next++) {
      const std::string command = fmt::format(
          "ffmpeg -nostdin -hide_banner -loglevel error -y -f lavfi -i testsrc=size={}x{}:rate={}:duration={} "
          "-c:v libx264 -pix_fmt yuv420p '{}' 2>&1",
          kWidth, kHeight, kRate, clip_seconds(i), paths[i]);
      if (std::system(command.c_str()) != 0) {
        std::lock_guard<std::mutex> lock(failure_lock);
        failure = "`" + command + "` failed (the benchmark needs the ffmpeg CLI with libx264: apt-get install ffmpeg)";
      }
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < std::min(threads, count); ++t) workers.emplace_back(work);
  for (auto& w : workers) w.join();
  if (!failure.empty()) throw std::runtime_error(failure);
  return paths;
}

struct PathRate {
  double seconds = 0;  // the median pass
  int64_t clips = 0;
  int64_t frames = 0;  // real (unpadded) frames
};

// Streams over every clip `passes` times with `workers` decode threads.
PathRate stream_rate(const kforge::sdk::VideoDataset& data, int passes) {
  std::vector<double> times;
  PathRate rate;
  for (int p = 0; p < passes; ++p) {
    const auto start = Clock::now();
    std::unique_ptr<kforge::sdk::ImageTextStream> stream = data.stream([](int64_t i) { return i; }, 0, data.size());
    int64_t clips = 0;
    int64_t frames = 0;
    while (std::optional<kforge::sdk::ImageTextSample> s = stream->next()) {
      ++clips;
      frames += s->frame_mask.sum().item<int64_t>();
    }
    times.push_back(seconds_since(start));
    if (stream->skipped() != 0) throw std::runtime_error(fmt::format("{} clips failed to decode", stream->skipped()));
    rate.clips = clips;
    rate.frames = frames;
  }
  rate.seconds = median(times);
  return rate;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kforge;
  const BenchArgs a = parse_bench_args(argc, argv);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  TempDir dir{fs::temp_directory_path() / fmt::format("kforge_bench_video_{}", getpid())};
  fs::create_directories(dir.path);

  const auto made = Clock::now();
  const std::vector<std::string> clips = write_clips(dir.path, a.clips, cores);
  const double make_s = seconds_since(made);
  int64_t bytes = 0;
  int64_t seconds = 0;
  {
    std::ofstream manifest(dir.path / "clips.jsonl");
    for (int i = 0; i < a.clips; ++i) {
      bytes += static_cast<int64_t>(fs::file_size(clips[i]));
      seconds += clip_seconds(i);
      manifest << fmt::format("{{\"video\": \"{}\", \"text\": \"a test pattern, clip {}, {} seconds\"}}\n",
                              fs::path(clips[i]).filename().string(), i, clip_seconds(i));
    }
  }

  // The [video] section as the host hands it to the video_jsonl component, and the spec the host builds.
  config::Value table = config::Value::make_table();
  table.set("data_root", config::Value::string((dir.path / "clips.jsonl").string()));
  table.set("dataset_type", config::Value::string("video_jsonl"));
  table.set("sampling_policy", config::Value::string("uniform"));
  table.set("max_samples", config::Value::integer(0));
  table.set("max_frames", config::Value::integer(kMaxFrames));
  table.set("min_frames", config::Value::integer(kMinFrames));
  table.set("fps", config::Value::floating(kFps));
  table.set("frame_size", config::Value::integer(a.size));
  table.set("max_clip_bytes", config::Value::integer(int64_t{2} << 30));
  table.set("prompt", config::Value::string("Describe the video: "));
  const config::SectionView section("video", table);
  std::shared_ptr<const sdk::FrameSampler> sampler = video::make_uniform_sampler(section);

  sdk::ImageTextSpec spec;
  spec.image_size = section.get_int("frame_size");
  const image_text::Normalization norm =
      a.norm == "clip" ? image_text::clip_normalization() : image_text::siglip_normalization();
  spec.pixels.mean = norm.mean;
  spec.pixels.std = norm.std;
  spec.max_text_len = kTextLen;
  spec.pad_id = 0;
  spec.eos_id = 1;
  spec.tokenize = [](std::string_view text) {
    std::vector<int64_t> ids;
    for (const char c : text) ids.push_back(static_cast<unsigned char>(c));
    return ids;
  };
  spec.max_frames = section.get_int("max_frames");
  spec.frame_times = [sampler](double duration_s) { return sampler->timestamps(duration_s); };

  std::cout << fmt::format(
      "{} clips: H.264 MP4 {}x{} testsrc at {} fps, {}..{} s ({} s in all, {:.1f} KB average; made in {:.1f} s)\n"
      "-> [{}, 3, {}, {}] float32 ({} normalisation), fps {}, min_frames {}, max_frames {}; median of {} passes\n",
      a.clips, kWidth, kHeight, kRate, kShortest, kLongest, seconds, bytes / 1e3 / a.clips, make_s, kMaxFrames, a.size,
      a.size, a.norm == "clip" ? "CLIP" : "SigLIP", kFps, kMinFrames, kMaxFrames, a.passes);
  std::cout << "workers   clips/s  frames/s  ms/clip  (data path alone)\n";

  std::vector<int> worker_counts = {0};
  for (int t = 1; t <= a.threads; t *= 2) worker_counts.push_back(t);
  if (worker_counts.back() != a.threads) worker_counts.push_back(a.threads);
  std::string summary;
  for (const int workers : worker_counts) {
    spec.num_workers = workers;
    const std::unique_ptr<sdk::VideoDataset> data = video::make_video_jsonl(section, spec);
    const PathRate r = stream_rate(*data, a.passes);
    std::cout << fmt::format("{:>7}  {:>8.1f}  {:>8.1f}  {:>7.2f}{}\n", workers, r.clips / r.seconds,
                             r.frames / r.seconds, r.seconds * 1e3 / r.clips,
                             workers == 0 ? "  (on the consumer's thread)" : "");
    summary += fmt::format("{}{} workers {:.1f} clips/s ({:.0f} frames/s)", summary.empty() ? "" : ", ", workers,
                           r.clips / r.seconds, r.frames / r.seconds);
  }

  // ClipDecoder alone on this thread: open, probe, decode at the sampler's times, scale to S x S RGB (uint8).
  video::DecodeOptions options;
  options.frame_size = a.size;
  std::vector<std::vector<double>> per_clip(clips.size());
  int64_t frames = 0;
  for (int p = 0; p < a.passes; ++p) {
    for (size_t i = 0; i < clips.size(); ++i) {
      const auto start = Clock::now();
      video::ClipDecoder decoder(clips[i], options);
      const video::DecodedClip decoded = decoder.decode(sampler->timestamps(decoder.duration_s()));
      per_clip[i].push_back(seconds_since(start));
      if (p == 0) frames += decoded.frames.size(0);
    }
  }
  double total = 0;
  double shortest = 1e30;
  double longest = 0;
  for (const auto& times : per_clip) {
    const double t = median(times);
    total += t;
    shortest = std::min(shortest, t);
    longest = std::max(longest, t);
  }
  const double ms_per_clip = total * 1e3 / static_cast<double>(clips.size());
  std::cout << fmt::format(
      "ClipDecoder alone, 1 thread: {:.2f} ms/clip average ({:.2f} for the fastest clip .. {:.2f} for the slowest; "
      "{:.1f} clips/s, {:.0f} frames/s)\n",
      ms_per_clip, shortest * 1e3, longest * 1e3, clips.size() / total, frames / total);
  // The environment that changes these figures (glibc malloc's tunables, LibTorch's intra-op threads), when set.
  std::string environment;
  for (const char* name : {"GLIBC_TUNABLES", "OMP_NUM_THREADS"}) {
    if (const char* value = std::getenv(name)) environment += fmt::format(", {}={}", name, value);
  }
  std::cout << fmt::format("bench_video on {} ({} cores{}): {}; ClipDecoder {:.2f} ms/clip\n", cpu_model(), cores,
                           environment, summary, ms_per_clip);
  return 0;
}
