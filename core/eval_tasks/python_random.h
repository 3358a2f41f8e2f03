// PythonRandom: CPython's random.Random (Mersenne Twister) draw for draw, so that few-shot sampling and bootstrap
// resampling pick what lm-eval-harness picks for the same seed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace kforge::eval_tasks {

class PythonRandom {
 public:
  /// random.Random(seed) for a non-negative integer seed (init_by_array of its 32-bit words).
  explicit PythonRandom(uint64_t seed);

  uint32_t next_u32();                     ///< genrand_uint32
  double random();                         ///< random.random(): 53 bits in [0, 1)
  uint64_t getrandbits(int k);             ///< random.getrandbits(k), 0 <= k <= 32
  uint64_t randbelow(uint64_t n);          ///< random._randbelow(n), n > 0
  /// The indices random.sample(range(n), k) draws, in its order (k <= n).
  std::vector<size_t> sample(size_t n, size_t k);
  /// The indices random.choices(range(n), k=k) draws (with replacement, no weights).
  std::vector<size_t> choices(size_t n, size_t k);

 private:
  static constexpr int kN = 624;
  void init_genrand(uint32_t seed);
  void reload();
  std::array<uint32_t, kN> state_{};
  int index_ = kN;
};

}  // namespace kforge::eval_tasks
