// Images per second of the image-text decode path (tar member read, JPEG decode, bilinear resize, normalise,
// tokenise) through DecodePool on 1..N worker threads, and how long a consumer that spends --step-ms per sample
// waits in next() once the queue is warm. A measurement, not a test.
//
// Usage: bench_image_text [--images DIR] [--count N] [--size S] [--threads T] [--step-ms MS]
//   --images DIR: the *.jpg files of DIR (e.g. the CC0 photos scripts/fetch_data.sh --images puts in
//                 data/raw/images); default: N generated 1024x717 JPEGs (quality 90)
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "data/webdataset_writer.h"
#include "image_fixtures.h"
#include "image_text_io/decode_pool.h"
#include "image_text_io/webdataset_source.h"

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

struct BenchArgs {
  std::string images;
  int count = 64;
  int size = 224;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double step_ms = 0;
};

BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    if (key == "--images")
      a.images = argv[i + 1];
    else if (key == "--count")
      a.count = std::stoi(argv[i + 1]);
    else if (key == "--size")
      a.size = std::stoi(argv[i + 1]);
    else if (key == "--threads")
      a.threads = std::stoi(argv[i + 1]);
    else if (key == "--step-ms")
      a.step_ms = std::stod(argv[i + 1]);
    else
      throw std::runtime_error("unknown option " + key +
                               " (see the usage at the top of benchmarks/image_text_decode.cpp)");
  }
  return a;
}

// The JPEGs to decode: the files of --images, or generated ones.
std::vector<std::string> bench_jpegs(const BenchArgs& a) {
  std::vector<std::string> jpegs;
  if (!a.images.empty()) {
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(a.images)) {
      if (e.path().extension() == ".jpg") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f, std::ios::binary);
      std::ostringstream bytes;
      bytes << in.rdbuf();
      jpegs.push_back(bytes.str());
    }
    if (jpegs.empty()) throw std::runtime_error("no .jpg in " + a.images);
    return jpegs;
  }
  for (int i = 0; i < 8; ++i) jpegs.push_back(kforge::test::encode_jpeg(kforge::test::test_pattern(1024, 717, i), 90));
  return jpegs;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kforge::image_text;
  const BenchArgs a = parse_bench_args(argc, argv);
  const std::vector<std::string> jpegs = bench_jpegs(a);
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("kforge_bench_image_text_{}", getpid());
  std::filesystem::create_directories(dir);
  kforge::data::TarShardWriter shard(dir / "shard-000000.tar");
  int64_t bytes = 0;
  for (int i = 0; i < a.count; ++i) {
    const std::string& jpeg = jpegs[i % jpegs.size()];
    shard.add(fmt::format("{:06d}.jpg", i), jpeg);
    shard.add(fmt::format("{:06d}.txt", i), fmt::format("a photo, number {}", i));
    bytes += static_cast<int64_t>(jpeg.size());
  }
  shard.close();
  const auto source = std::make_shared<WebDatasetSource>(find_shards(dir));
  PreprocessOptions preprocess;
  preprocess.image_height = preprocess.image_width = a.size;
  preprocess.text = TextOptions{64, 0, 1};
  preprocess.tokenize = kforge::test::byte_tokenizer();
  std::cout << fmt::format("{} JPEGs ({:.1f} KB average) -> [3, {}, {}] float32\n", a.count, bytes / 1e3 / a.count,
                           a.size, a.size);
  std::cout << "workers  images/s  (decode path alone)\n";
  std::vector<int> worker_counts = {0};
  for (int t = 1; t <= a.threads; t *= 2) worker_counts.push_back(t);
  if (worker_counts.back() != a.threads) worker_counts.push_back(a.threads);
  for (const int workers : worker_counts) {
    DecodePool pool(
        source, preprocess, [](int64_t p) { return p; }, 0, a.count, DecodePoolOptions{workers, 0, {}});
    const auto start = Clock::now();
    int64_t n = 0;
    while (pool.next()) ++n;
    std::cout << fmt::format("{:>7}  {:>8.1f}{}\n", workers, n / seconds_since(start),
                             workers == 0 ? "  (on the consumer's thread)" : "");
  }
  if (a.step_ms > 0) {
    // A consumer busy for step_ms per sample: after the first queue-full, next() should not wait.
    DecodePool pool(
        source, preprocess, [](int64_t p) { return p; }, 0, a.count, DecodePoolOptions{a.threads, 0, {}});
    double waited = 0;
    int64_t n = 0;
    const int64_t warm = 2 * a.threads;
    for (;;) {
      const auto before = Clock::now();
      auto sample = pool.next();
      if (!sample) break;
      if (n++ >= warm) waited += seconds_since(before);
      const auto busy = Clock::now();
      while (seconds_since(busy) * 1e3 < a.step_ms) {
      }
    }
    std::cout << fmt::format(
        "consumer at {} ms/sample, {} workers: {:.3f} ms average wait in next() after the first {}\n", a.step_ms,
        a.threads, waited * 1e3 / std::max<int64_t>(n - warm, 1), warm);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
