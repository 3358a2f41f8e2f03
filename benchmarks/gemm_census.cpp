// An LD_PRELOAD library that times every fp32 GEMM a process makes through BLAS's sgemm_ or oneDNN's dnnl_sgemm
// (the two kforge's and PyTorch's CPU projections and attention products use), untraced, and at exit writes to
// $GEMM_CENSUS_OUT one JSON line per (library, transposes, m, n, k): calls, total and median seconds, then one line of
// wall seconds during which at least one GEMM ran (all, projection-sized: >= 2^26 multiply-adds, and smaller), which
// counts GEMMs that run side by side on several threads once. The same measurement for any trainer, unlike two
// profilers' op tables. Built and used by run_cpu_benchmark.sh --gemm-census.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

namespace {

using Shape = std::tuple<std::string, char, char, int64_t, int64_t, int64_t>;

// Wall time during which at least one call was running.
struct Busy {
  int running = 0;
  double since = 0, seconds = 0;
  void enter(double t) {
    if (running++ == 0) since = t;
  }
  void leave(double t) {
    if (--running == 0) seconds += t - since;
  }
};

constexpr int64_t kProjectionSized = int64_t{1} << 26;  // multiply-adds a call

struct Census {
  std::mutex mutex;
  std::map<Shape, std::vector<double>> seconds;
  Busy all, projection_sized, smaller;

  ~Census() {
    const char* path = std::getenv("GEMM_CENSUS_OUT");
    if (path == nullptr || seconds.empty()) return;
    FILE* out = std::fopen(path, "w");
    if (out == nullptr) return;
    for (auto& [shape, times] : seconds) {
      double total = 0;
      for (const double t : times) total += t;
      std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
      const auto& [library, ta, tb, m, n, k] = shape;
      std::fprintf(out,
                   "{\"library\": \"%s\", \"trans\": \"%c%c\", \"m\": %lld, \"n\": %lld, \"k\": %lld, \"calls\": %zu, "
                   "\"total_s\": %.9f, \"median_s\": %.9f}\n",
                   library.c_str(), ta, tb, static_cast<long long>(m), static_cast<long long>(n),
                   static_cast<long long>(k), times.size(), total, times[times.size() / 2]);
    }
    std::fprintf(out, "{\"busy_s\": {\"all\": %.9f, \"projection-sized\": %.9f, \"smaller\": %.9f}}\n", all.seconds,
                 projection_sized.seconds, smaller.seconds);
    std::fclose(out);
  }
};

// Destroyed at exit, after the trainers' last GEMM; a process that execs (the kforge front-end) writes nothing.
Census census;

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Times one call: its duration under its shape, and the wall time while any (and any of its size) GEMM runs.
class Timed {
 public:
  Timed(const char* library, char ta, char tb, int64_t m, int64_t n, int64_t k)
      : shape_(library, ta, tb, m, n, k),
        size_(m * n * k >= kProjectionSized ? census.projection_sized : census.smaller) {
    const std::lock_guard<std::mutex> lock(census.mutex);
    start_ = now();
    census.all.enter(start_);
    size_.enter(start_);
  }
  ~Timed() {
    const std::lock_guard<std::mutex> lock(census.mutex);
    const double end = now();
    census.all.leave(end);
    size_.leave(end);
    census.seconds[shape_].push_back(end - start_);
  }

 private:
  Shape shape_;
  Busy& size_;
  double start_ = 0;
};

// The real symbol from the library already loaded (LibTorch may load it RTLD_LOCAL, out of RTLD_NEXT's reach).
void* real(const char* library, const char* symbol) {
  void* handle = ::dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
  void* fn = handle == nullptr ? nullptr : ::dlsym(handle, symbol);
  if (fn == nullptr) {
    std::fprintf(stderr, "gemm_census: %s is not in %s, or that is not loaded\n", symbol, library);
    std::abort();
  }
  return fn;
}

}  // namespace

extern "C" {

void sgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c,
            const int* ldc) {
  using Sgemm = void (*)(const char*, const char*, const int*, const int*, const int*, const float*, const float*,
                         const int*, const float*, const int*, const float*, float*, const int*);
  static const auto next = reinterpret_cast<Sgemm>(real("libblas.so.3", "sgemm_"));
  const Timed timed("blas", *ta, *tb, *m, *n, *k);
  next(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

int dnnl_sgemm(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                            float, float*, int64_t);
  static const auto next = reinterpret_cast<DnnlSgemm>(real("libdnnl.so.2", "dnnl_sgemm"));
  const Timed timed("onednn", ta, tb, m, n, k);
  return next(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // extern "C"
