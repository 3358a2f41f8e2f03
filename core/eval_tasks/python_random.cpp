// PythonRandom: MT19937 seeded as CPython's random_seed (init_by_array), with random(), getrandbits(), _randbelow(),
// sample() and choices() as Lib/random.py (3.9 to 3.12) computes them.
#include "eval_tasks/python_random.h"

#include <cmath>
#include <unordered_set>

#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {

void PythonRandom::init_genrand(uint32_t seed) {
  state_[0] = seed;
  for (int i = 1; i < kN; ++i) {
    state_[i] = 1812433253u * (state_[i - 1] ^ (state_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  }
  index_ = kN;
}

PythonRandom::PythonRandom(uint64_t seed) {
  std::vector<uint32_t> key{static_cast<uint32_t>(seed)};
  if (seed >> 32) key.push_back(static_cast<uint32_t>(seed >> 32));
  init_genrand(19650218u);
  int i = 1;
  size_t j = 0;
  for (size_t k = std::max<size_t>(kN, key.size()); k > 0; --k) {
    state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1664525u)) + key[j] + static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= kN) {
      state_[0] = state_[kN - 1];
      i = 1;
    }
    if (j >= key.size()) j = 0;
  }
  for (int k = kN - 1; k > 0; --k) {
    state_[i] = (state_[i] ^ ((state_[i - 1] ^ (state_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= kN) {
      state_[0] = state_[kN - 1];
      i = 1;
    }
  }
  state_[0] = 0x80000000u;
}

void PythonRandom::reload() {
  constexpr int kM = 397;
  constexpr uint32_t kUpper = 0x80000000u, kLower = 0x7fffffffu, kMatrix = 0x9908b0dfu;
  for (int k = 0; k < kN; ++k) {
    const uint32_t y = (state_[k] & kUpper) | (state_[(k + 1) % kN] & kLower);
    state_[k] = state_[(k + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? kMatrix : 0u);
  }
  index_ = 0;
}

uint32_t PythonRandom::next_u32() {
  if (index_ >= kN) reload();
  uint32_t y = state_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

double PythonRandom::random() {
  const uint32_t a = next_u32() >> 5, b = next_u32() >> 6;
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

uint64_t PythonRandom::getrandbits(int k) {
  if (k < 0 || k > 32) throw sdk::Error("PythonRandom::getrandbits: k must be in [0, 32]");
  if (k == 0) return 0;
  return next_u32() >> (32 - k);
}

uint64_t PythonRandom::randbelow(uint64_t n) {
  if (n == 0 || n > (uint64_t{1} << 31)) throw sdk::Error("PythonRandom::randbelow: n must be in [1, 2^31]");
  int k = 0;
  for (uint64_t v = n; v != 0; v >>= 1) ++k;  // n.bit_length()
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return r;
}

std::vector<size_t> PythonRandom::sample(size_t n, size_t k) {
  if (k > n) throw sdk::Error("PythonRandom::sample: sample larger than population");
  std::vector<size_t> result(k);
  size_t setsize = 21;  // the size of a small set minus the size of an empty list
  if (k > 5) setsize += static_cast<size_t>(std::pow(4.0, std::ceil(std::log(3.0 * static_cast<double>(k)) / std::log(4.0))));
  if (n <= setsize) {  // an n-length list is smaller than a k-length set
    std::vector<size_t> pool(n);
    for (size_t i = 0; i < n; ++i) pool[i] = i;
    for (size_t i = 0; i < k; ++i) {
      const size_t j = randbelow(n - i);
      result[i] = pool[j];
      pool[j] = pool[n - i - 1];  // move the non-selected item into the vacancy
    }
  } else {
    std::unordered_set<size_t> selected;
    for (size_t i = 0; i < k; ++i) {
      size_t j = randbelow(n);
      while (selected.count(j)) j = randbelow(n);
      selected.insert(j);
      result[i] = j;
    }
  }
  return result;
}

std::vector<size_t> PythonRandom::choices(size_t n, size_t k) {
  std::vector<size_t> out(k);
  const auto total = static_cast<double>(n);
  for (size_t i = 0; i < k; ++i) out[i] = static_cast<size_t>(std::floor(random() * total));
  return out;
}

}  // namespace kforge::eval_tasks
