// The CPU's measured fp32 FMA peak: every thread runs independent fused multiply-adds on 12
// accumulators (enough to hide FMA latency on two pipes) at 256 and 512 bits; prints the best as
// JSON {"fma_peak_gflops": G, "threads": T}. The benchmark's MFU denominator, built with -march=native.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

constexpr int kAccumulators = 12;
constexpr long kIterations = 40'000'000;

template <class Vec, Vec (*Splat)(float), Vec (*Fma)(Vec, Vec, Vec)>
float spin() {
  Vec acc[kAccumulators];
#pragma GCC unroll 12
  for (int i = 0; i < kAccumulators; ++i) acc[i] = Splat(1.0f + 1e-3f * static_cast<float>(i));
  const Vec x = Splat(0.999999f), y = Splat(1e-7f);
  for (long n = 0; n < kIterations; ++n) {
#pragma GCC unroll 12
    for (int i = 0; i < kAccumulators; ++i) acc[i] = Fma(acc[i], x, y);
  }
  float sink = 0;
  for (const Vec& v : acc) sink += reinterpret_cast<const float*>(&v)[0];
  return sink;
}

__m256 splat256(float v) { return _mm256_set1_ps(v); }
__m256 fma256(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
__m512 splat512(float v) { return _mm512_set1_ps(v); }
__m512 fma512(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }

/// GFLOP/s of `threads` threads each running `body` (lanes floats per FMA, 2 FLOPs each).
template <class Body>
double measure(int threads, int lanes, Body body) {
  std::vector<float> sinks(threads);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { sinks[t] = body(); });
  for (auto& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (sinks[0] == 12345.0f) std::puts("");  // keeps the result alive
  return 2.0 * lanes * kAccumulators * static_cast<double>(kIterations) * threads / seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : static_cast<int>(std::thread::hardware_concurrency());
  double best = 0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    best = std::max(best, measure(threads, 8, spin<__m256, splat256, fma256>));
#ifdef __AVX512F__
    best = std::max(best, measure(threads, 16, spin<__m512, splat512, fma512>));
#endif
  }
  std::printf("{\"fma_peak_gflops\": %.1f, \"threads\": %d}\n", best, threads);
}
