// Mixtures: temperature probabilities against hand computations, the global sample stream (counts
// within binomial noise, zero weights never drawn, phases switching at their step, each source a
// permutation per epoch, exact continuation from a position) and the concatenated index space.
#include "data/mixture_sampler.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "data/mixture_dataset.h"
#include "kforge/sdk/error.h"
#include "support/data_test_util.h"

namespace kforge::test {
namespace {

using data::MixtureDraw;
using data::MixturePhase;
using data::MixtureSampler;

// Hand computations: p_i = w_i / sum at T = 1; p_i = w_i^(1/T) / sum_j w_j^(1/T) otherwise.
TEST(MixtureProbabilities, MatchHandComputedTemperatureScaling) {
  const std::vector<double> t1 = data::mixture_probabilities({3, 1}, 1.0);
  EXPECT_DOUBLE_EQ(t1[0], 0.75);
  EXPECT_DOUBLE_EQ(t1[1], 0.25);
  // T = 2: sqrt(3) / (sqrt(3) + 1) = 0.6339745962155614.
  const std::vector<double> t2 = data::mixture_probabilities({3, 1}, 2.0);
  EXPECT_NEAR(t2[0], 0.6339745962155614, 1e-15);
  EXPECT_NEAR(t2[1], 0.3660254037844386, 1e-15);
  // T = 0.5 squares the weights: 1, 0, 9 over 10; a zero weight stays zero.
  const std::vector<double> half = data::mixture_probabilities({1, 0, 3}, 0.5);
  EXPECT_NEAR(half[0], 0.1, 1e-15);
  EXPECT_EQ(half[1], 0.0);
  EXPECT_NEAR(half[2], 0.9, 1e-15);
  // Large T flattens towards uniform: T = 1000 over weights 8 and 1 gives 8^(1/1000) : 1.
  const std::vector<double> flat = data::mixture_probabilities({8, 1}, 1000.0);
  EXPECT_NEAR(flat[0] / flat[1], std::pow(8.0, 1e-3), 1e-12);
}

TEST(MixtureProbabilities, RefuseNegativeAllZeroAndNonPositiveTemperature) {
  EXPECT_THROW(data::mixture_probabilities({1, -0.5}, 1.0), sdk::Error);
  EXPECT_THROW(data::mixture_probabilities({0, 0}, 1.0), sdk::Error);
  EXPECT_THROW(data::mixture_probabilities({1, 1}, 0.0), sdk::Error);
}

std::vector<int64_t> counts_of(const std::vector<MixtureDraw>& draws, size_t sources) {
  std::vector<int64_t> n(sources, 0);
  for (const MixtureDraw& d : draws) ++n[static_cast<size_t>(d.source)];
  return n;
}

// |count - n p| <= 4.5 sigma of Binomial(n, p): a false alarm has probability < 7e-6 per source.
void expect_binomial(int64_t count, int64_t n, double p, const std::string& what) {
  const double sigma = std::sqrt(static_cast<double>(n) * p * (1 - p));
  EXPECT_LE(std::abs(static_cast<double>(count) - static_cast<double>(n) * p), 4.5 * sigma)
      << what << ": " << count << " of " << n << " at p = " << p;
}

TEST(MixtureSampler, CountsFollowTheTemperedWeightsAndAZeroWeightIsNeverDrawn) {
  MixtureSampler s({50, 7, 300, 20}, {{0, {5, 0, 3, 2}, 1.0}}, 2.0, 11);
  const std::vector<double> p = data::mixture_probabilities({5, 0, 3, 2}, 2.0);
  constexpr int64_t kN = 20000;
  const std::vector<int64_t> n = counts_of(s.draw(0, kN), 4);
  EXPECT_EQ(n[1], 0);
  for (size_t i : {0, 2, 3}) expect_binomial(n[i], kN, p[i], "source " + std::to_string(i));
  EXPECT_EQ(s.position().draws, n);
  EXPECT_EQ(s.position().samples, kN);
}

TEST(MixtureSampler, PhasesSwitchTheWeightsAtTheirStartStep) {
  MixtureSampler s({10, 10, 10}, {{0, {1, 1, 0}, 1.0}, {5, {0, 0, 1}, 0.5}, {9, {1, 0, 0}, 0.1}}, 1.0, 3);
  EXPECT_EQ(s.phase_at(0), 0u);
  EXPECT_EQ(s.phase_at(4), 0u);
  EXPECT_EQ(s.phase_at(5), 1u);
  EXPECT_EQ(s.phase_at(8), 1u);
  EXPECT_EQ(s.phase_at(9), 2u);
  EXPECT_EQ(s.phase_at(1000), 2u);
  EXPECT_EQ(counts_of(s.draw(4, 500), 3)[2], 0);
  EXPECT_EQ(counts_of(s.draw(5, 500), 3), (std::vector<int64_t>{0, 0, 500}));
  EXPECT_EQ(counts_of(s.draw(9, 500), 3), (std::vector<int64_t>{500, 0, 0}));
}

TEST(MixtureSampler, EachEpochOfASourceIsAPermutationAndEpochsDiffer) {
  MixtureSampler s({13, 29}, {{0, {1, 1}, 1.0}}, 1.0, 5);
  std::vector<std::vector<int64_t>> seen(2);
  for (const MixtureDraw& d : s.draw(0, 400)) seen[static_cast<size_t>(d.source)].push_back(d.element);
  for (size_t j = 0; j < 2; ++j) {
    const int64_t size = j == 0 ? 13 : 29;
    ASSERT_GE(static_cast<int64_t>(seen[j].size()), 2 * size);
    for (int64_t e = 0; e < 2; ++e) {
      std::vector<int64_t> epoch(seen[j].begin() + e * size, seen[j].begin() + (e + 1) * size);
      std::sort(epoch.begin(), epoch.end());
      EXPECT_EQ(epoch, arange(0, size)) << "source " << j << " epoch " << e;
    }
    EXPECT_FALSE(std::equal(seen[j].begin(), seen[j].begin() + size, seen[j].begin() + size)) << "source " << j;
  }
  EXPECT_EQ(MixtureSampler::permutation(5, 1, 3, 29), MixtureSampler::permutation(5, 1, 3, 29));
  EXPECT_NE(MixtureSampler::permutation(5, 1, 3, 29), MixtureSampler::permutation(6, 1, 3, 29));
}

TEST(MixtureSampler, ContinuesExactlyFromAPositionAcrossAPhaseChange) {
  const std::vector<MixturePhase> phases{{0, {2, 1, 1}, 1.0}, {3, {0, 1, 4}, 1.0}};
  MixtureSampler straight({11, 5, 17}, phases, 1.5, 42);
  std::vector<MixtureDraw> expected;
  for (int64_t step = 0; step < 6; ++step) {
    const auto d = straight.draw(step, 24);
    expected.insert(expected.end(), d.begin(), d.end());
  }
  MixtureSampler first({11, 5, 17}, phases, 1.5, 42);
  std::vector<MixtureDraw> got;
  for (int64_t step = 0; step < 2; ++step) {
    const auto d = first.draw(step, 24);
    got.insert(got.end(), d.begin(), d.end());
  }
  MixtureSampler resumed({11, 5, 17}, phases, 1.5, 42);
  resumed.restore(first.position());
  for (int64_t step = 2; step < 6; ++step) {
    // The global stream does not depend on how a step's samples are split (e.g. over ranks).
    for (int part = 0; part < 3; ++part) {
      const auto d = resumed.draw(step, 8);
      got.insert(got.end(), d.begin(), d.end());
    }
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(resumed.position(), straight.position());
  EXPECT_THROW(resumed.restore({5, {5, 0}}), sdk::Error);     // two sources for three
  EXPECT_THROW(resumed.restore({5, {1, 1, 1}}), sdk::Error);  // counts that do not add up
}

// A source of `n` windows whose window i holds base + i.
class ConstantWindows final : public sdk::Dataset {
 public:
  ConstantWindows(int64_t n, int64_t base) : n_(n), base_(base) {}
  int64_t size() const override { return n_; }
  at::Tensor window(int64_t index) const override { return at::full({3}, base_ + index, at::kLong); }
  std::string describe() const override { return "constant windows"; }

 private:
  int64_t n_, base_;
};

TEST(MixtureDataset, ConcatenatesTheSourcesIndexSpaces) {
  std::vector<data::MixtureDataset::Source> sources;
  sources.push_back({"a", std::make_unique<ConstantWindows>(3, 100)});
  sources.push_back({"b", std::make_unique<ConstantWindows>(2, 200)});
  const data::MixtureDataset mix(std::move(sources));
  EXPECT_EQ(mix.size(), 5);
  EXPECT_EQ(mix.offset(1), 3);
  EXPECT_EQ(mix.source_of(2), 0u);
  EXPECT_EQ(mix.source_of(3), 1u);
  EXPECT_EQ(mix.window(1)[0].item<int64_t>(), 101);
  EXPECT_EQ(mix.window(4)[0].item<int64_t>(), 201);
  EXPECT_THROW(mix.window(5), sdk::Error);
  EXPECT_HAS(mix.describe(), "'b': constant windows");

  std::vector<data::MixtureDataset::Source> empty;
  empty.push_back({"wiki", std::make_unique<ConstantWindows>(0, 0)});
  try {
    data::MixtureDataset bad(std::move(empty));
    ADD_FAILURE() << "an empty source was accepted";
  } catch (const sdk::Error& e) {
    EXPECT_HAS(e.what(), "source 'wiki' holds no whole sample window");
  }
}

}  // namespace
}  // namespace kforge::test
