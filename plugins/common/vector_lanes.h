// Float vector helpers shared by the built-in plugins' kernels (cross-entropy, softmax, RMSNorm, AdamW, ...):
// kLanes-wide float vectors, float/bfloat16 loads and stores, a vectorised exp, which widths this CPU
// runs (within KFORGE_CPU_CAPABILITY) and the dispatch to one of them. Internal to kforge's plugins, not the SDK.
#pragma once

#include <c10/core/ScalarType.h>
#include <c10/util/BFloat16.h>
#include <kforge/sdk/error.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace kforge::builtin::lanes {

/// 4 (SSE), 8 (AVX2+FMA) or 16 (AVX-512) floats per vector.
enum class Width { Sse, Avx2, Avx512 };
inline constexpr int kLanesOf[] = {4, 8, 16};

// GCC/Clang vectors of kLanes floats: 4 (SSE) everywhere, 8 where the CPU has AVX2+FMA, 16 with
// AVX-512. The helpers are always inlined, so a wide vector never crosses a narrower call; GCC's
// ABI note on passing them (-Wpsabi) is therefore moot, and silenced for the files that include this.
#pragma GCC diagnostic ignored "-Wpsabi"
template <int kLanes>
struct Lanes {
  typedef float Floats __attribute__((vector_size(4 * kLanes)));
  typedef int32_t Ints __attribute__((vector_size(4 * kLanes)));
  typedef uint32_t Words __attribute__((vector_size(4 * kLanes)));
  typedef uint16_t Halves __attribute__((vector_size(2 * kLanes)));  ///< bfloat16 bits
};
template <int kLanes>
using Floats = typename Lanes<kLanes>::Floats;
template <int kLanes>
using Ints = typename Lanes<kLanes>::Ints;
template <int kLanes>
using Words = typename Lanes<kLanes>::Words;
template <int kLanes>
using Halves = typename Lanes<kLanes>::Halves;

template <int kLanes>
[[gnu::always_inline]] inline Floats<kLanes> splat(float value) {
  return Floats<kLanes>{} + value;
}

template <int kLanes>
[[gnu::always_inline]] inline Floats<kLanes> load(const float* from) {
  Floats<kLanes> v;
  std::memcpy(&v, from, sizeof v);
  return v;
}

/// kLanes bfloat16 widened to float: each one's bits are a float's upper half.
template <int kLanes>
[[gnu::always_inline]] inline Floats<kLanes> load(const c10::BFloat16* from) {
  Halves<kLanes> h;
  std::memcpy(&h, from, sizeof h);
  return std::bit_cast<Floats<kLanes>>(__builtin_convertvector(h, Ints<kLanes>) << 16);
}

template <int kLanes>
[[gnu::always_inline]] inline void store(Floats<kLanes> v, float* to, int64_t count = kLanes) {
  std::memcpy(to, &v, sizeof(float) * count);
}

/// Rounded to nearest even as c10::BFloat16(float) does, NaN to its quiet NaN.
template <int kLanes>
[[gnu::always_inline]] inline void store(Floats<kLanes> v, c10::BFloat16* to, int64_t count = kLanes) {
  const Words<kLanes> bits = std::bit_cast<Words<kLanes>>(v);
  const Words<kLanes> rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16;
  const Words<kLanes> nan = std::bit_cast<Words<kLanes>>(v != v);  // all ones in NaN lanes
  const Halves<kLanes> h = __builtin_convertvector((rounded & ~nan) | (nan & 0x7FC0u), Halves<kLanes>);
  std::memcpy(to, &h, sizeof(uint16_t) * count);
}

/// The `count` < kLanes values at `from`, the other lanes `fill` (by default -inf, whose exp is 0
/// and which is never a max).
template <int kLanes, typename Scalar>
[[gnu::always_inline]] inline Floats<kLanes> load_tail(const Scalar* from, int64_t count,
                                                       float fill = -std::numeric_limits<float>::infinity()) {
  Floats<kLanes> v = splat<kLanes>(fill);
  for (int64_t k = 0; k < count; ++k) v[k] = static_cast<float>(from[k]);
  return v;
}

/// Cephes expf per lane (about 1 ulp); exactly 0 below -87 (exp < 1.7e-38), including -inf.
template <int kLanes>
[[gnu::always_inline]] inline Floats<kLanes> vector_exp(Floats<kLanes> x) {
  using F = Floats<kLanes>;
  const F lo = splat<kLanes>(-87.0f);
  const F hi = splat<kLanes>(88.0f);
  F v = x > hi ? hi : x;
  v = v < lo ? lo : v;
  const F fx = v * 1.44269504088896341f + 0.5f;
  F n = __builtin_convertvector(__builtin_convertvector(fx, Ints<kLanes>), F);
  n = n > fx ? n - 1.0f : n;  // floor
  const F r = v - n * 0.693359375f + n * 2.12194440e-4f;
  F p = splat<kLanes>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const Ints<kLanes> exponent = (__builtin_convertvector(n, Ints<kLanes>) + 127) << 23;
  const F result = p * std::bit_cast<F>(exponent);
  return x < lo ? splat<kLanes>(0.0f) : result;
}

template <int kLanes>
[[gnu::always_inline]] inline float horizontal_max(Floats<kLanes> v) {
  float out = v[0];
  for (int k = 1; k < kLanes; ++k) out = std::max(out, v[k]);
  return out;
}

template <int kLanes>
[[gnu::always_inline]] inline double horizontal_sum(Floats<kLanes> v) {
  double out = 0;
  for (int k = 0; k < kLanes; ++k) out += v[k];
  return out;
}

/// Whether this CPU runs `width`'s kernels.
inline bool cpu_supports(Width width) {
  switch (width) {
    case Width::Sse:
      return true;
#if defined(__x86_64__)
    case Width::Avx2: {
      static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
      return has;
    }
    case Width::Avx512: {
      static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                              __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
      return has;
    }
#endif
    default:
      return false;
  }
}

/// The width KFORGE_CPU_CAPABILITY names: "avx512" (or unset or empty: no cap), "avx2" or "default" (SSE), the
/// values ATEN_CPU_CAPABILITY takes for LibTorch's kernels. Any other value is an sdk::ConfigError naming the variable
/// (a run stops at its first kernel, before any step, with the usage exit code).
inline Width capability_named(const char* value) {
  if (value == nullptr || *value == '\0' || std::strcmp(value, "avx512") == 0) return Width::Avx512;
  if (std::strcmp(value, "avx2") == 0) return Width::Avx2;
  if (std::strcmp(value, "default") == 0) return Width::Sse;
  throw sdk::ConfigError(
      std::string("KFORGE_CPU_CAPABILITY='") + value +
      "' in the environment: expected avx512, avx2 or default (the widest vector kernels kforge may run)");
}

/// The widest width kforge's kernels may use on any CPU: KFORGE_CPU_CAPABILITY, read once. A cap lets a wide CPU run
/// (and measure) the kernels a narrower one would run.
inline Width capability_cap() {
  static const Width cap = capability_named(std::getenv("KFORGE_CPU_CAPABILITY"));
  return cap;
}

/// The widest width this CPU runs that is no wider than `cap`.
inline Width widest_within(Width cap) {
  for (const Width width : {Width::Avx512, Width::Avx2}) {
    if (static_cast<int>(width) <= static_cast<int>(cap) && cpu_supports(width)) return width;
  }
  return Width::Sse;
}

/// The widest width this CPU runs, within KFORGE_CPU_CAPABILITY's cap.
inline Width widest_supported() { return widest_within(capability_cap()); }

/// Calls body(float{}) or body(c10::BFloat16{}) for `dtype`; any other dtype is an sdk::Error naming
/// `kernel` (callers route other dtypes to their composite path first).
template <typename Body>
void dispatch_float_or_bfloat16(c10::ScalarType dtype, const char* kernel, const Body& body) {
  if (dtype == c10::ScalarType::Float) return body(float{});
  if (dtype == c10::ScalarType::BFloat16) return body(c10::BFloat16{});
  throw sdk::Error(std::string(kernel) + ": got " + c10::toString(dtype) + "; only float32 and bfloat16 are supported");
}

#if defined(__x86_64__)
namespace detail {
// The width copies of dispatch_width's body: flatten inlines everything the body calls, so its vector
// code is compiled for the target ISA and never runs (emulated) at a narrower one.
template <typename Body>
[[gnu::target("arch=x86-64-v4"), gnu::flatten]] decltype(auto) run_avx512(const Body& body) {
  return body(std::integral_constant<int, 16>{});
}
template <typename Body>
[[gnu::target("arch=x86-64-v3"), gnu::flatten]] decltype(auto) run_avx2(const Body& body) {
  return body(std::integral_constant<int, 8>{});
}
}  // namespace detail
#endif

/// Calls body(std::integral_constant<int, kLanes>{}) compiled for `width`: 16 lanes under
/// x86-64-v4 (AVX-512), 8 under x86-64-v3 (AVX2+FMA), 4 at the baseline (SSE). The body passes the
/// lanes on as a template argument (row_kernel<lanes>(...)); `width` must be one cpu_supports().
template <typename Body>
decltype(auto) dispatch_width(Width width, const Body& body) {
  switch (width) {
#if defined(__x86_64__)
    case Width::Avx512:
      return detail::run_avx512(body);
    case Width::Avx2:
      return detail::run_avx2(body);
#endif
    default:
      return body(std::integral_constant<int, 4>{});
  }
}

/// One kernel family's width: the widest this CPU runs within the cap, unless a test chose another (any the CPU runs).
class WidthChoice {
 public:
  explicit WidthChoice(const char* kernel) : kernel_(kernel), width_(widest_supported()) {}
  Width get() const { return width_.load(std::memory_order_relaxed); }
  /// Throws sdk::Error for a width this CPU cannot run.
  void set(Width width) {
    if (!cpu_supports(width)) {
      throw sdk::Error(std::string(kernel_) + ": this CPU cannot run the " +
                       std::to_string(kLanesOf[static_cast<int>(width)]) + "-lane kernels");
    }
    width_.store(width);
  }

 private:
  const char* kernel_;
  std::atomic<Width> width_;
};

}  // namespace kforge::builtin::lanes
