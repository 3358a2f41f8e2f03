// Whether a streamed export ([data] hf_streaming) keeps the debug shape's step waiting on data: each step takes its
// batch from a StreamFeed (10,000-document shuffle buffer, tokenised on 0..N worker threads) and runs the built-in
// transformer's forward + backward at configs/train/debug.toml's shape; printed per worker count: the median time
// blocked in micro_batches(), the median step time and their ratio, and a batch's time with no step between them. A measurement, not a
// test (benchmarks/README.md).
//
//   build/tests/core/data/bench_stream_feed [--text data/raw/moby-dick.txt] [--tokenizer data/moby/tokenizer.model]
//                                           [--steps 12] [--batch 16] [--seq 256]
//
// The export is the text's paragraphs as JSON Lines, copied 20 times (so the stream does not wrap in the run).
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "feed/stream_feed.h"
#include "transformer/model_config.h"
#include "transformer/transformer.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string text = "data/raw/moby-dick.txt", tokenizer = "data/moby/tokenizer.model";
  int64_t steps = 12, batch = 16, seq = 256;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--text") o.text = value;
    else if (key == "--tokenizer") o.tokenizer = value;
    else if (key == "--steps") o.steps = std::atoll(value.c_str());
    else if (key == "--batch") o.batch = std::atoll(value.c_str());
    else if (key == "--seq") o.seq = std::atoll(value.c_str());
    else throw std::runtime_error("unknown option " + key);
  }
  return o;
}

// The paragraphs of `text` as {"text": ...} lines, 20 copies, in `dir`/train.jsonl.
fs::path write_export(const fs::path& text, const fs::path& dir) {
  std::ifstream in(text);
  if (!in) throw std::runtime_error("cannot read " + text.string() + " (scripts/fetch_data.sh fetches it)");
  std::stringstream whole;
  whole << in.rdbuf();
  std::vector<std::string> paragraphs;
  std::string s = whole.str();
  for (size_t at = 0; at < s.size();) {
    const size_t end = std::min(s.find("\n\n", at), s.size());
    if (end > at) paragraphs.push_back(s.substr(at, end - at));
    at = end + 2;
  }
  fs::create_directories(dir);
  std::ofstream out(dir / "train.jsonl");
  for (int copy = 0; copy < 20; ++copy) {
    for (const auto& p : paragraphs) out << nlohmann::json{{"text", p}}.dump() << "\n";
  }
  return dir / "train.jsonl";
}

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const fs::path dir = fs::temp_directory_path() / fmt::format("bench_stream_feed_{}", ::getpid());
  const fs::path file = write_export(o.text, dir);
  kforge::builtin::models::ModelConfig c;  // configs/train/debug.toml's model
  c.dim = 256;
  c.n_layers = 4;
  c.n_heads = c.n_kv_heads = 4;
  c.vocab_size = 8000;
  c.max_seq_len = o.seq;
  at::manual_seed(0);
  kforge::builtin::models::Transformer model(c);
  fmt::print("debug shape: batch {} x seq {}, dim 256, 4 layers, vocab 8000, {} LibTorch threads; {} steps after 2 "
             "warm-up; export {:.1f} MB\n",
             o.batch, o.seq, at::get_num_threads(), o.steps, static_cast<double>(fs::file_size(file)) / 1e6);
  fmt::print("{:>8} {:>14} {:>12} {:>12} {:>18}\n", "workers", "wait (ms)", "step (ms)", "wait/step",
             "back to back (ms)");
  for (const int workers : {0, 1, 2, 4}) {
    kforge::feed::StreamFeed::Shape shape;
    shape.batch_size = o.batch;
    shape.seq_len = o.seq;
    shape.vocab_size = c.vocab_size;
    shape.workers = workers;
    kforge::feed::StreamFeed feed({file}, o.tokenizer, shape, 0, 1);
    std::vector<double> waits, steps;
    for (int64_t step = -2; step < o.steps; ++step) {
      const auto start = Clock::now();
      const kforge::data::Batch batch = feed.micro_batches(step, false).at(0);
      const double wait = since(start);
      model.zero_grad();
      at::cross_entropy_loss(model.forward(batch.input_ids).reshape({-1, c.vocab_size}), batch.labels.reshape({-1}))
          .backward();
      if (step >= 0) {
        waits.push_back(wait);
        steps.push_back(since(start));
      }
    }
    // Batches back to back with no step between them: without workers, the reading and tokenising a batch costs.
    std::vector<double> alone;
    for (int64_t k = 0; k < o.steps; ++k) {
      const auto start = Clock::now();
      feed.micro_batches(k, false);
      alone.push_back(since(start));
    }
    fmt::print("{:>8} {:>14.3f} {:>12.1f} {:>12.4f} {:>18.3f}\n", workers, median(waits) * 1e3, median(steps) * 1e3,
               median(waits) / median(steps), median(alone) * 1e3);
  }
  fs::remove_all(dir);
  return 0;
}
