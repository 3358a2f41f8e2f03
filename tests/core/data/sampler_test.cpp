// BatchSampler: KempnerForge's DistributedSampler order (torch.randperm with seed+epoch, drop_last,
// rank striding) and exact resume from {epoch, batches_yielded}, also twice and across epochs.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "support/data_test_util.h"
#include "data/sampler.h"
#include "kforge/sdk/error.h"
#include "support/oracle.h"

namespace kforge::test {
namespace {

using data::BatchSampler;
using Batches = std::vector<std::vector<int64_t>>;

Batches take(BatchSampler& s, int64_t n) {
  Batches out;
  for (int64_t i = 0; i < n; ++i) out.push_back(s.next_batch());
  return out;
}

TEST(BatchSampler, SameSeedSameOrderAndEachEpochIsAPermutation) {
  BatchSampler a(103, 4, 7), b(103, 4, 7), c(103, 4, 8);
  EXPECT_EQ(a.batches_per_epoch(), 25);  // 103 // 4, last partial batch dropped
  const Batches ra = take(a, 60), rb = take(b, 60), rc = take(c, 60);
  EXPECT_EQ(ra, rb);
  EXPECT_NE(ra, rc);
  const auto e0 = a.epoch_indices(0), e1 = a.epoch_indices(1);
  EXPECT_NE(e0, e1);  // reshuffled every epoch
  for (const auto& e : {e0, e1}) {
    std::vector<int64_t> sorted = e;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, arange(0, 103));
  }
  // The batches walk the epoch order.
  for (int64_t k = 0; k < 25; ++k) {
    EXPECT_EQ(ra[k], std::vector<int64_t>(e0.begin() + 4 * k, e0.begin() + 4 * k + 4));
    EXPECT_EQ(ra[25 + k], std::vector<int64_t>(e1.begin() + 4 * k, e1.begin() + 4 * k + 4));
  }
}

TEST(BatchSampler, RanksPartitionTheTruncatedPermutationEqually) {
  const int world = 3;
  const int64_t n = 100;  // 99 used: 33 per rank
  std::vector<int64_t> all;
  std::set<int64_t> seen;
  for (int epoch = 0; epoch < 2; ++epoch) {
    all.clear();
    seen.clear();
    std::vector<std::vector<int64_t>> per_rank;
    for (int r = 0; r < world; ++r) {
      BatchSampler s(n, 5, 42, r, world);
      EXPECT_EQ(s.samples_per_rank(), 33);
      EXPECT_EQ(s.batches_per_epoch(), 6);
      per_rank.push_back(s.epoch_indices(epoch));
      ASSERT_EQ(per_rank.back().size(), 33u);
      for (int64_t i : per_rank.back()) {
        EXPECT_TRUE(seen.insert(i).second) << "index " << i << " on two ranks";
        EXPECT_GE(i, 0);
        EXPECT_LT(i, n);
      }
    }
    EXPECT_EQ(seen.size(), 99u);
    // indices[rank::world] of the world=1 permutation.
    const auto perm = BatchSampler(n, 1, 42).epoch_indices(epoch);
    for (int r = 0; r < world; ++r) {
      for (size_t k = 0; k < 33; ++k) EXPECT_EQ(per_rank[r][k], perm[r + 3 * k]);
    }
  }
}

TEST(BatchSampler, UnshuffledOrderIsRankStridedArange) {
  BatchSampler s(10, 2, 0, 1, 2, /*shuffle=*/false);
  EXPECT_EQ(s.epoch_indices(0), (std::vector<int64_t>{1, 3, 5, 7, 9}));
  EXPECT_EQ(s.epoch_indices(5), s.epoch_indices(0));
  EXPECT_EQ(take(s, 3), (Batches{{1, 3}, {5, 7}, {1, 3}}));
}

TEST(BatchSampler, OrderMatchesTorchRandpermWithSeedPlusEpoch) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is the randperm oracle (scripts/setup.sh)";
  BatchSampler s(50, 1, 1234);
  std::string out;
  ASSERT_EQ(run_oracle("data_randperm.py", {"50", "1234", "1237"}, &out), 0) << out;  // epochs 0 and 3
  std::stringstream lines(out);
  for (int epoch : {0, 3}) {
    std::string line;
    ASSERT_TRUE(std::getline(lines, line)) << out;
    std::vector<int64_t> expected;
    std::stringstream ss(line);
    for (std::string tok; std::getline(ss, tok, ',');) expected.push_back(std::stoll(tok));
    EXPECT_EQ(s.epoch_indices(epoch), expected) << "epoch " << epoch;
  }
}

TEST(BatchSampler, PositionCountsBatchesAndRollsOverAfterTheLastOne) {
  BatchSampler s(12, 4, 1);
  EXPECT_EQ(s.position(), (BatchSampler::Position{0, 0}));
  take(s, 3);
  EXPECT_EQ(s.position(), (BatchSampler::Position{0, 3}));  // end of epoch 0, not yet rolled
  take(s, 1);
  EXPECT_EQ(s.position(), (BatchSampler::Position{1, 1}));
}

TEST(BatchSampler, RestoringAnyPositionContinuesExactlyAsAnUninterruptedRun) {
  const int64_t n = 37, batch = 3;  // 2 ranks: 18 samples, 6 batches per epoch
  for (int rank = 0; rank < 2; ++rank) {
    BatchSampler ref(n, batch, 5, rank, 2);
    const int64_t bpe = ref.batches_per_epoch();
    ASSERT_EQ(bpe, 6);
    const Batches full = take(ref, 4 * bpe);
    for (int64_t cut = 0; cut <= 3 * bpe; ++cut) {
      BatchSampler first(n, batch, 5, rank, 2);
      Batches got = take(first, cut);
      BatchSampler resumed(n, batch, 5, rank, 2);
      resumed.restore(first.position());
      const Batches rest = take(resumed, 4 * bpe - cut);
      got.insert(got.end(), rest.begin(), rest.end());
      EXPECT_EQ(got, full) << "rank " << rank << ", resumed after " << cut << " batches";
    }
  }
}

TEST(BatchSampler, DoubleResumeWithinAnEpochAndAcrossAnEpochBoundary) {
  BatchSampler ref(40, 4, 9);  // 10 batches per epoch
  const Batches full = take(ref, 30);
  for (const auto& [c1, c2] : std::vector<std::pair<int, int>>{{2, 7}, {3, 10}, {8, 13}, {10, 11}, {0, 25}}) {
    BatchSampler a(40, 4, 9);
    Batches got = take(a, c1);
    BatchSampler b(40, 4, 9);
    b.restore(a.position());
    const Batches mid = take(b, c2 - c1);
    got.insert(got.end(), mid.begin(), mid.end());
    BatchSampler c(40, 4, 9);
    c.restore(b.position());
    const Batches rest = take(c, 30 - c2);
    got.insert(got.end(), rest.begin(), rest.end());
    EXPECT_EQ(got, full) << "resumed after " << c1 << " and " << c2 << " batches";
  }
}

TEST(BatchSampler, RefusesImpossiblePositionsAndTooLittleData) {
  BatchSampler s(40, 4, 9);
  EXPECT_NO_THROW(s.restore({2, 10}));  // end of epoch 2
  const auto epoch3 = s.epoch_indices(3);
  EXPECT_EQ(s.next_batch(), std::vector<int64_t>(epoch3.begin(), epoch3.begin() + 4));
  try {
    s.restore({0, 11});
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_HAS(e.what(), "an epoch has 10 batches here");
    EXPECT_HAS(e.what(), "same data, batch size and data-parallel size");
  }
  try {
    BatchSampler tiny(7, 4, 0, 0, 2);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_HAS(e.what(), "7 samples: 3 per data-parallel rank (2 ranks), fewer than one batch of 4");
  }
  EXPECT_THROW(BatchSampler(10, 2, 0, 2, 2), sdk::Error);
  EXPECT_THROW(BatchSampler(10, 0, 0), sdk::Error);
}

}  // namespace
}  // namespace kforge::test
