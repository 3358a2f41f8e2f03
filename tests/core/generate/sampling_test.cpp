// sample(): greedy at temperature 0; top-k / top-p draws stay inside the support computed here from the logits.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <gtest/gtest.h>

#include <set>

#include "generate/sampling.h"
#include "kforge/sdk/error.h"

namespace kforge::generate {
namespace {

/// Allowed tokens of one row, computed independently: the k largest, then the nucleus of those.
std::set<int64_t> allowed(const at::Tensor& row, double temperature, int64_t top_k, double top_p) {
  const auto n = row.size(0);
  std::vector<std::pair<double, int64_t>> sorted;
  for (int64_t i = 0; i < n; ++i) sorted.emplace_back(row[i].item<double>() / temperature, i);
  std::sort(sorted.begin(), sorted.end(), [](auto a, auto b) { return a.first > b.first; });
  if (top_k > 0) sorted.resize(static_cast<size_t>(std::min(top_k, n)));
  double z = 0;
  for (auto [l, i] : sorted) z += std::exp(l - sorted[0].first);
  std::set<int64_t> out;
  double before = 0;
  for (auto [l, i] : sorted) {
    if (before >= top_p) break;
    out.insert(i);
    before += std::exp(l - sorted[0].first) / z;
  }
  return out;
}

void expect_draws_within_support(double temperature, int64_t top_k, double top_p) {
  at::manual_seed(3);
  const at::Tensor logits = at::randn({4, 40}) * 3;
  std::vector<std::set<int64_t>> support;
  for (int64_t r = 0; r < 4; ++r) support.push_back(allowed(logits[r], temperature, top_k, top_p));
  std::vector<std::set<int64_t>> seen(4);
  for (uint64_t seed = 0; seed < 300; ++seed) {
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(seed);
    const at::Tensor drawn = sample(logits, {temperature, top_k, top_p}, g);
    for (int64_t r = 0; r < 4; ++r) {
      const int64_t t = drawn[r].item<int64_t>();
      EXPECT_TRUE(support[r].count(t)) << "row " << r << " drew " << t << " outside the allowed set";
      seen[r].insert(t);
    }
  }
  // The filter must not be stricter than the definition either: more than one token shows up when allowed.
  for (int64_t r = 0; r < 4; ++r) {
    if (support[r].size() > 1) EXPECT_GT(seen[r].size(), 1u) << "row " << r;
  }
}

TEST(Sample, TemperatureZeroIsArgmax) {
  at::manual_seed(1);
  const at::Tensor logits = at::randn({5, 30});
  at::Generator g = at::make_generator<at::CPUGeneratorImpl>(0);
  EXPECT_TRUE(sample(logits, {0.0, 0, 1.0}, g).equal(logits.argmax(-1)));
}

TEST(Sample, TopKRestrictsTheSupport) { expect_draws_within_support(1.0, 5, 1.0); }
TEST(Sample, TopPRestrictsTheSupport) { expect_draws_within_support(1.0, 0, 0.6); }
TEST(Sample, TopKAndTopPWithTemperature) { expect_draws_within_support(0.7, 8, 0.8); }

TEST(Sample, TopKOneIsGreedy) {
  at::manual_seed(2);
  const at::Tensor logits = at::randn({6, 30});
  for (uint64_t seed = 0; seed < 20; ++seed) {
    at::Generator g = at::make_generator<at::CPUGeneratorImpl>(seed);
    EXPECT_TRUE(sample(logits, {1.3, 1, 1.0}, g).equal(logits.argmax(-1)));
  }
}

TEST(Sample, SameSeedSameDraws) {
  const at::Tensor logits = at::zeros({3, 50});
  at::Generator a = at::make_generator<at::CPUGeneratorImpl>(9), b = at::make_generator<at::CPUGeneratorImpl>(9);
  EXPECT_TRUE(sample(logits, {1.0, 0, 1.0}, a).equal(sample(logits, {1.0, 0, 1.0}, b)));
}

TEST(Sample, RejectsBadOptions) {
  EXPECT_THROW(check({-1.0, 0, 1.0}), sdk::Error);
  EXPECT_THROW(check({1.0, -1, 1.0}), sdk::Error);
  EXPECT_THROW(check({1.0, 0, 0.0}), sdk::Error);
  EXPECT_THROW(check({1.0, 0, 1.5}), sdk::Error);
}

}  // namespace
}  // namespace kforge::generate
