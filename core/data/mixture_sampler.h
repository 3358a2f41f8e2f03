// MixtureSampler: one global, world-size-independent stream of mixture samples, with phases.
#pragma once

#include <cstdint>
#include <vector>

namespace kforge::data {

/// p_i = w_i / sum(w) at temperature 1, else p_i proportional to w_i^(1/T) (T > 1 flattens); a
/// weight of 0 stays 0. Throws sdk::Error for a negative weight or when none is > 0.
std::vector<double> mixture_probabilities(const std::vector<double>& weights, double temperature);

/// The weights (one per source) and learning-rate multiplier from an optimizer step on.
struct MixturePhase {
  int64_t start_step = 0;
  std::vector<double> weights;
  double lr_scale = 1.0;
};

/// One sample of the stream: a source and the index of a window within it.
struct MixtureDraw {
  int source = 0;
  int64_t element = 0;
  bool operator==(const MixtureDraw&) const = default;
};

/// Global sample g (counted from the start of training over all data-parallel ranks) comes from the
/// source of a categorical draw with the weights of the phase active at g's step, from a
/// counter-based hash of (seed, g): no generator state. The k-th sample of source j is window
/// perm(seed, j, e)[k mod size_j] with e = k div size_j its epoch, so a source repeats no window
/// within an epoch. The position {samples, draws per source} does not depend on the world size.
class MixtureSampler {
 public:
  struct Position {
    int64_t samples = 0;         ///< global samples drawn
    std::vector<int64_t> draws;  ///< of them, per source
    bool operator==(const Position&) const = default;
  };

  /// `phases` sorted by start_step, the first starting at step 0 (the configured weights).
  MixtureSampler(std::vector<int64_t> source_sizes, std::vector<MixturePhase> phases, double temperature,
                 uint64_t seed);

  /// The index of the phase active at `step` (optimizer steps completed before the step).
  size_t phase_at(int64_t step) const;
  const MixturePhase& phase(size_t index) const { return phases_[index]; }
  size_t phases() const { return phases_.size(); }
  const std::vector<double>& probabilities(size_t phase) const { return probabilities_[phase]; }

  /// The next `count` samples of the global stream, with the weights active at `step`.
  std::vector<MixtureDraw> draw(int64_t step, int64_t count);

  Position position() const { return pos_; }
  /// Continues from `p` (same source sizes and seed). Throws sdk::Error when p names another number of sources.
  void restore(Position p);

  /// The source of global sample `g` given cumulative probabilities (last = 1).
  static int source_of(uint64_t seed, int64_t g, const std::vector<double>& cumulative);
  /// A permutation of [0, n), a pure function of (seed, source, epoch).
  static std::vector<int64_t> permutation(uint64_t seed, int source, int64_t epoch, int64_t n);

 private:
  std::vector<int64_t> sizes_;
  std::vector<MixturePhase> phases_;
  std::vector<std::vector<double>> probabilities_, cumulative_;  ///< per phase
  uint64_t seed_;
  Position pos_;
  std::vector<int64_t> cached_epoch_;  ///< per source: the epoch of cached_perm_, or -1
  std::vector<std::vector<int64_t>> cached_perm_;
};

}  // namespace kforge::data
