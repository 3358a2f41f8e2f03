// Adapters without the oracle: token counts, a per-call pooling window, the pooling rules (square grids;
// attentional_pool's divisible grid, checkable before anything is built), and make_adapter's refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "adapter_factory.h"
#include "hf_tensors.h"
#include "patch_grid.h"
#include "pooling_adapter.h"
#include "support/expect_text.h"

namespace kforge::test {
namespace {

vision::AdapterOptions options(const std::string& type, int64_t window = 2, int64_t heads = 2) {
  vision::AdapterOptions o;
  o.type = type;
  o.in_dim = 8;
  o.out_dim = 4;
  o.pool_window = window;
  o.pool_heads = heads;
  return o;
}

TEST(Adapters, OutputTokenCounts) {
  EXPECT_EQ(vision::make_adapter(options("mlp_2layer"))->output_num_tokens(196), 196);
  EXPECT_EQ(vision::make_adapter(options("linear"))->output_num_tokens(196), 196);
  EXPECT_EQ(vision::make_adapter(options("avgpool", 2))->output_num_tokens(196), 49);  // 14x14 at window 2
  EXPECT_EQ(vision::make_adapter(options("avgpool", 3))->output_num_tokens(729), 81);  // 27x27 at window 3
  EXPECT_EQ(vision::make_adapter(options("avgpool", 3))->output_num_tokens(196), 25);  // ragged: ceil(14/3)^2
  EXPECT_EQ(vision::make_adapter(options("attentional_pool", 2))->output_num_tokens(196), 49);
  EXPECT_EQ(vision::pooled_token_count(25, 2, "avgpool"), 9);
  const at::Tensor out = vision::make_adapter(options("avgpool", 3))->forward(at::randn({2, 196, 8}));
  EXPECT_EQ(out.sizes(), at::IntArrayRef({2, 25, 4}));
}

TEST(Adapters, PoolingWindowCanBeChosenPerCall) {
  for (const std::string type : {"avgpool", "attentional_pool"}) {
    SCOPED_TRACE(type);
    const auto image = vision::make_adapter(options(type, 2));
    const auto video = vision::make_adapter(options(type, 3));
    std::map<std::string, at::Tensor> weights;
    for (const auto& p : image->named_parameters()) weights[p.key()] = p.value();
    vision::load_hf_tensors(*video, weights, "the image adapter");
    auto& pooling = dynamic_cast<vision::PoolingAdapter&>(*image);
    EXPECT_EQ(pooling.pool_window(), 2);
    const at::Tensor x = at::randn({2, 36, 8});
    EXPECT_TRUE(at::equal(pooling.forward(x, 3), video->forward(x))) << "window 3, the same weights";
    EXPECT_EQ(image->forward(x).size(1), 9);
    EXPECT_EQ(pooling.output_num_tokens(36, 3), 4);
    EXPECT_EQ(image->output_num_tokens(36), 9);
  }
}

TEST(Adapters, AttentionalPoolRefusesAGridTheWindowDoesNotDivide) {
  EXPECT_NO_THROW(vision::check_attentional_pool_grid(729, 3));
  expect_has(config_error_of([] { vision::check_attentional_pool_grid(196, 3); }),
             {"[adapter] pool_window = 3", "14x14 patch grid (196 encoder tokens)", "1, 2, 7, 14", "avgpool"});
  const auto adapter = vision::make_adapter(options("attentional_pool", 3));
  expect_has(config_error_of([&] { adapter->output_num_tokens(25); }), {"pool_window = 3", "5x5"});
  expect_has(config_error_of([&] { adapter->forward(at::randn({1, 25, 8})); }), {"pool_window = 3", "5x5"});
}

TEST(Adapters, PoolingRefusesANonSquareGrid) {
  expect_has(config_error_of([] { vision::pooled_token_count(197, 2, "avgpool"); }),
             {"[adapter] type = \"avgpool\"", "197 tokens", "not a positive perfect square", "CLS"});
  expect_has(config_error_of([] { vision::check_attentional_pool_grid(50, 5); }), {"50 tokens"});
}

TEST(Adapters, MakeAdapterRefusesBadKeys) {
  expect_has(config_error_of([] { vision::make_adapter(options("mlp")); }),
             {"[adapter] type = \"mlp\"", "mlp_2layer, linear, avgpool, attentional_pool"});
  expect_has(config_error_of([] { vision::make_adapter(options("avgpool", 0)); }),
             {"[adapter] pool_window = 0: must be positive"});
  expect_has(config_error_of([] { vision::make_adapter(options("attentional_pool", 2, 3)); }),
             {"[adapter] pool_heads = 3", "(8)"});
  auto o = options("mlp_2layer");
  o.activation = "tanh";
  expect_has(config_error_of([&] { vision::make_adapter(o); }),
             {"[adapter] activation = \"tanh\"", "gelu, silu, relu"});
  o = options("linear");
  o.in_dim = 0;
  expect_has(config_error_of([&] { vision::make_adapter(o); }), {"in_dim = 0"});
}

}  // namespace
}  // namespace kforge::test
