// Cached decoding: logits from prefill + decode steps, and from forked states, equal one uncached forward over the
// sequence.
#include <gtest/gtest.h>

#include "core/generate/generate_test_util.h"
#include "kforge/sdk/error.h"
#include "support/forked_decoding.h"

namespace kforge::test::gen {
namespace {

void expect_cached_equals_full(int n_kv_heads) {
  auto model = tiny_model(n_kv_heads);
  model->eval();
  at::NoGradGuard no_grad;
  const at::Tensor tokens = at::randint(0, 64, {3, 14}, at::kLong);
  const at::Tensor full = model->forward(tokens);
  auto state = model->start_decoding(3, 14);
  std::vector<at::Tensor> parts;
  int64_t pos = 0;
  for (int64_t chunk : {5, 1, 1, 4, 1, 2}) {  // prefill, single steps, and multi-token chunks
    parts.push_back(model->decode(tokens.narrow(1, pos, chunk), *state));
    pos += chunk;
  }
  ASSERT_EQ(pos, 14);
  const at::Tensor cached = at::cat(parts, 1);
  ASSERT_EQ(cached.sizes(), full.sizes());
  EXPECT_LT((cached - full).abs().max().item<double>(), 1e-5);
}

TEST(CachedDecode, MatchesFullForwardWithGqa) { expect_cached_equals_full(2); }
TEST(CachedDecode, MatchesFullForwardWithMha) { expect_cached_equals_full(4); }
TEST(CachedDecode, MatchesFullForwardWithMqa) { expect_cached_equals_full(1); }

TEST(CachedDecode, ForkedCopiesContinueAsTheFullForwardAndLeaveTheOriginalState) {
  for (const int n_kv_heads : {1, 2, 4}) {
    auto model = tiny_model(n_kv_heads);
    model->eval();
    EXPECT_LT(forked_decoding_error(*model, 64), 1e-5) << n_kv_heads << " kv heads";  // the bound of the tests above
  }
}

TEST(CachedDecode, ForkRefusesAForeignStateAndNoCopies) {
  auto model = tiny_model(2);
  auto state = model->start_decoding(1, 4);
  EXPECT_THROW(model->fork_decoding(*state, 0), sdk::Error);
  struct Foreign final : sdk::Model::DecodeState {};
  EXPECT_THROW(model->fork_decoding(Foreign(), 2), sdk::Error);
}

TEST(CachedDecode, RefusesMoreThanMaxSeqLenAndOverfillingTheCache) {
  auto model = tiny_model(2);
  EXPECT_THROW(model->start_decoding(1, 33), sdk::ConfigError);
  auto state = model->start_decoding(1, 4);
  at::NoGradGuard no_grad;
  model->decode(at::zeros({1, 3}, at::kLong), *state);
  EXPECT_THROW(model->decode(at::zeros({1, 2}, at::kLong), *state), sdk::Error);
  EXPECT_THROW(model->decode(at::zeros({2, 1}, at::kLong), *state), sdk::Error);  // wrong batch
}

}  // namespace
}  // namespace kforge::test::gen
