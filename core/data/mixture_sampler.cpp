// MixtureSampler: counter-based categorical draws and per-source seeded permutations.
#include "data/mixture_sampler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "kforge/sdk/error.h"

namespace kforge::data {
namespace {

// splitmix64's output function: a bijective 64-bit mix.
uint64_t mix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Domain tags keep the sample draws and the permutations' streams apart.
constexpr uint64_t kDrawTag = 0x6d69787475726531ULL, kPermTag = 0x7065726d75746532ULL;

}  // namespace

std::vector<double> mixture_probabilities(const std::vector<double>& weights, double temperature) {
  if (!(temperature > 0)) throw sdk::Error(fmt::format("mixture temperature {} must be > 0", temperature));
  std::vector<double> p(weights.size(), 0.0);
  double max_log = -INFINITY;
  for (double w : weights) {
    if (!(w >= 0)) throw sdk::Error(fmt::format("mixture weight {} must be >= 0", w));
    if (w > 0) max_log = std::max(max_log, std::log(w));
  }
  if (max_log == -INFINITY) throw sdk::Error("every mixture weight is 0: at least one must be > 0");
  double total = 0;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] > 0)
      p[i] = temperature == 1.0 ? weights[i] : std::exp((std::log(weights[i]) - max_log) / temperature);
    total += p[i];
  }
  for (double& x : p) x /= total;
  return p;
}

MixtureSampler::MixtureSampler(std::vector<int64_t> source_sizes, std::vector<MixturePhase> phases, double temperature,
                               uint64_t seed)
    : sizes_(std::move(source_sizes)), phases_(std::move(phases)), seed_(seed) {
  if (phases_.empty() || phases_.front().start_step != 0) {
    throw sdk::Error("mixture sampler: the first phase must start at step 0");
  }
  for (const MixturePhase& phase : phases_) {
    if (phase.weights.size() != sizes_.size()) {
      throw sdk::Error(fmt::format("mixture sampler: {} weights for {} sources", phase.weights.size(), sizes_.size()));
    }
    probabilities_.push_back(mixture_probabilities(phase.weights, temperature));
    std::vector<double> cumulative;
    double sum = 0;
    size_t last_positive = 0;
    for (size_t i = 0; i < sizes_.size(); ++i) {
      sum += probabilities_.back()[i];
      cumulative.push_back(sum);
      if (probabilities_.back()[i] > 0) last_positive = i;
    }
    // Rounding must not leave u in [sum, 1) to nobody: the last sampled source closes the range.
    for (size_t i = last_positive; i < cumulative.size(); ++i) cumulative[i] = 1.0;
    cumulative_.push_back(std::move(cumulative));
  }
  for (int64_t n : sizes_) {
    if (n < 1) throw sdk::Error(fmt::format("mixture sampler: a source of {} windows", n));
  }
  pos_.draws.assign(sizes_.size(), 0);
  cached_epoch_.assign(sizes_.size(), -1);
  cached_perm_.resize(sizes_.size());
}

size_t MixtureSampler::phase_at(int64_t step) const {
  size_t active = 0;
  for (size_t i = 0; i < phases_.size(); ++i) {
    if (phases_[i].start_step <= step) active = i;
  }
  return active;
}

int MixtureSampler::source_of(uint64_t seed, int64_t g, const std::vector<double>& cumulative) {
  const uint64_t h = mix64(mix64(seed ^ kDrawTag) ^ static_cast<uint64_t>(g));
  const double u = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  for (size_t i = 0; i < cumulative.size(); ++i) {
    if (u < cumulative[i]) return static_cast<int>(i);
  }
  return static_cast<int>(cumulative.size()) - 1;  // unreachable: the last entry is 1
}

std::vector<int64_t> MixtureSampler::permutation(uint64_t seed, int source, int64_t epoch, int64_t n) {
  std::vector<int64_t> perm(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) perm[static_cast<size_t>(i)] = i;
  uint64_t state = mix64(mix64(mix64(seed ^ kPermTag) ^ static_cast<uint64_t>(source)) ^ static_cast<uint64_t>(epoch));
  for (int64_t i = n - 1; i > 0; --i) {  // Fisher-Yates; j uniform in [0, i] by a 64x64 -> 128-bit multiply
    state = mix64(state);
    const auto j = static_cast<int64_t>((static_cast<unsigned __int128>(state) * static_cast<uint64_t>(i + 1)) >> 64);
    std::swap(perm[static_cast<size_t>(i)], perm[static_cast<size_t>(j)]);
  }
  return perm;
}

std::vector<MixtureDraw> MixtureSampler::draw(int64_t step, int64_t count) {
  const std::vector<double>& cumulative = cumulative_[phase_at(step)];
  std::vector<MixtureDraw> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t n = 0; n < count; ++n) {
    const int source = source_of(seed_, pos_.samples++, cumulative);
    const auto s = static_cast<size_t>(source);
    const int64_t k = pos_.draws[s]++;
    const int64_t epoch = k / sizes_[s];
    if (cached_epoch_[s] != epoch) {
      cached_perm_[s] = permutation(seed_, source, epoch, sizes_[s]);
      cached_epoch_[s] = epoch;
    }
    out.push_back({source, cached_perm_[s][static_cast<size_t>(k % sizes_[s])]});
  }
  return out;
}

void MixtureSampler::restore(Position p) {
  int64_t total = 0;
  for (int64_t d : p.draws) total += d;
  if (p.draws.size() != sizes_.size() || total != p.samples) {
    throw sdk::Error(fmt::format(
        "cannot resume the mixture: the checkpoint drew {} samples from {} sources ({} in all), this run mixes {} "
        "sources; resume with the checkpoint's [[data.datasets]]",
        p.samples, p.draws.size(), total, sizes_.size()));
  }
  pos_ = std::move(p);
}

}  // namespace kforge::data
