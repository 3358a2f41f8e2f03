// Tokenizer encode speed: loads a tokenizer file (any kind data.tokenizer_path takes) and encodes a text file's
// paragraphs (blank-line separated, as prepare-data sees documents) on 1 and on T threads (default: every core),
// 3 passes each by the same threads; prints the load time, then per pass as JSON lines MB/s and tokens/s of wall
// time, and per CPU-second of the workers (the per-core speed, whatever else the machine runs). Pass 1 starts
// with cold per-thread piece caches (a new corpus); passes 2 and 3 find them warm.
//   build/tests/core/data/bench_tokenizer TOKENIZER TEXT [THREADS]
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "data/tokenizer.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::vector<std::string> paragraphs_of(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find("\n\n", at);
    end = end == std::string::npos ? text.size() : end + 2;
    out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

struct Pass {
  size_t tokens = 0;
  double seconds = 0;
  double cpu_seconds = 0;  ///< summed over the workers: what the pass costs on an otherwise idle core
};

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Three passes over the paragraphs by the same `threads` workers (so pass 2 and 3 find their piece caches warm),
/// which take paragraphs in turn; a barrier starts and ends each pass.
std::vector<Pass> encode_passes(const kforge::data::Tokenizer& tokenizer, const std::vector<std::string>& paragraphs,
                                int threads) {
  constexpr int kPasses = 3;
  std::vector<Pass> passes(kPasses);
  std::atomic<size_t> next{0}, tokens{0};
  std::atomic<int64_t> cpu_ns{0};
  std::chrono::steady_clock::time_point start;
  std::barrier sync(threads + 1);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int pass = 0; pass < kPasses; ++pass) {
        sync.arrive_and_wait();
        const double cpu_start = thread_cpu_seconds();
        size_t mine = 0;
        for (size_t i; (i = next++) < paragraphs.size();) mine += tokenizer.encode(paragraphs[i]).size();
        tokens += mine;
        cpu_ns += static_cast<int64_t>((thread_cpu_seconds() - cpu_start) * 1e9);
        sync.arrive_and_wait();
      }
    });
  }
  for (auto& pass : passes) {
    next = 0;
    tokens = 0;
    cpu_ns = 0;
    start = std::chrono::steady_clock::now();
    sync.arrive_and_wait();
    sync.arrive_and_wait();
    pass = Pass{tokens, seconds_since(start), 1e-9 * static_cast<double>(cpu_ns)};
  }
  for (auto& t : pool) t.join();
  return passes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s TOKENIZER TEXT [THREADS]\n", argv[0]);
    return 2;
  }
  const int threads = argc > 3 ? std::atoi(argv[3]) : static_cast<int>(std::thread::hardware_concurrency());
  std::ifstream in(argv[2], std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const auto paragraphs = paragraphs_of(text);
  auto start = std::chrono::steady_clock::now();
  const kforge::data::Tokenizer tokenizer(argv[1]);
  std::printf("{\"tokenizer\": \"%s\", \"describe\": \"%s\", \"load_s\": %.3f, \"text_bytes\": %zu}\n", argv[1],
              tokenizer.describe().c_str(), seconds_since(start), text.size());
  for (int t : {1, threads}) {
    const auto passes = encode_passes(tokenizer, paragraphs, t);
    for (size_t pass = 0; pass < passes.size(); ++pass) {
      const auto& p = passes[pass];
      std::printf(
          "{\"threads\": %d, \"pass\": %zu, \"tokens\": %zu, \"mb_per_s\": %.2f, \"tokens_per_s\": %.0f, "
          "\"mb_per_cpu_s\": %.2f, \"tokens_per_cpu_s\": %.0f}\n",
          t, pass + 1, p.tokens, text.size() / p.seconds / 1e6, p.tokens / p.seconds, text.size() / p.cpu_seconds / 1e6,
          p.tokens / p.cpu_seconds);
    }
  }
}
