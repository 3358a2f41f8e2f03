// FSDP's float8 all-gather ([train] mixed_precision = "fp8"): its e4m3 codec against the model's float8 cast (every
// bf16 pattern), the decoded weight's float8 operand against the whole weight's (Float8Linear's output and input
// gradient bit for bit), and two FSDP ranks (threads) on a float8 transformer: the forward's logits bit for bit the
// whole model's, and the bytes each rank sends to the gathers counted (a float8 weight's elements one byte each,
// half a bf16 gather's).
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <iostream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "parallel/float8_codes.h"
#include "parallel/fully_sharded.h"
#include "parallel/precision.h"
#include "support/two_ranks.h"
#include "transformer/float8_cast.h"
#include "transformer/float8_linear.h"
#include "transformer/transformer.h"

namespace kforge::test {
namespace {

using builtin::models::Float8Format;

// float8_cast's rounding is checked against the OCP specification's oracle bit for bit (tests/plugins/models); the
// codec's codes decode to exactly its values on every bf16 value (every pattern FSDP's cast sees: it rounds to bf16
// first) under scales that keep them, saturate them, and push them into e4m3's subnormals.
TEST(Float8Codes, DecodeToTheModelsFloat8CastOnEveryBf16Pattern) {
  const at::Tensor x = at::arange(65536, at::kInt).bitwise_left_shift(16).view(at::kFloat);
  for (const float s : {1.0f, 3.7f, 1e-3f, 1e-30f}) {
    const at::Tensor scale = at::full({}, s);
    const at::Tensor codes = parallel::encode_e4m3(x, scale);
    ASSERT_EQ(codes.scalar_type(), at::kByte);
    const at::Tensor got = parallel::decode_e4m3(codes, at::ones({}));
    const at::Tensor want = builtin::models::round_to_float8(x * scale, Float8Format::E4M3);
    const at::Tensor same = got.view(at::kInt).eq(want.view(at::kInt)) | (got.isnan() & want.isnan());
    EXPECT_EQ(same.logical_not().sum().item<int64_t>(), 0) << "scale " << s;
  }
}

// What a rank holds after the gather, decode(encode(W)), is cast by Float8Linear to the whole weight's own operand:
// its output and input gradient (the two products the weight enters) are bit for bit those of W itself.
TEST(Float8Codes, TheDecodedWeightIsCastToTheWholeWeightsOperand) {
  at::manual_seed(3);
  for (const double magnitude : {1e-6, 0.02, 1.0, 300.0, 1e6}) {
    at::Tensor w = at::randn({40, 24}) * magnitude;
    w[3][5] = 0.0;  // zeros and a negative zero code 0x00 and 0x80
    w[4][1] = -0.0;
    const at::Tensor scale = parallel::e4m3_scale(parallel::bf16_amax(w));
    const at::Tensor decoded = parallel::decode_e4m3(parallel::encode_e4m3(w, scale), scale).view(w.sizes());
    const at::Tensor x = at::randn({6, 24});
    const at::Tensor dy = at::randn({6, 40});
    std::vector<at::Tensor> outputs, input_gradients;
    for (const at::Tensor& weight : {w, decoded}) {
      const at::Tensor input = x.clone().requires_grad_(true);
      const at::Tensor y = builtin::models::float8_linear(input, weight);
      y.backward(dy);
      outputs.push_back(y.detach());
      input_gradients.push_back(input.grad());
    }
    EXPECT_TRUE(at::equal(outputs[0], outputs[1])) << "weights of magnitude " << magnitude;
    EXPECT_TRUE(at::equal(input_gradients[0], input_gradients[1])) << "weights of magnitude " << magnitude;
  }
}

// A two-block float8 transformer with uneven rows (vocabulary 50, MLP hidden size 72 on two ranks), built alike (seed
// 5) on every thread; `float8` false builds the same model with plain linears.
std::shared_ptr<builtin::models::Transformer> seeded_transformer(bool float8) {
  const builtin::models::ModelConfig config{
      .dim = 32, .n_layers = 2, .n_heads = 4, .n_kv_heads = 2, .vocab_size = 50, .ffn_hidden_dim = 72,
      .max_seq_len = 16, .float8 = float8};
  static std::mutex draws;  // the rank threads share the global generator: one seeds and draws at a time
  const std::lock_guard<std::mutex> lock(draws);
  at::manual_seed(5);
  return std::make_shared<builtin::models::Transformer>(config);
}

// The weights KempnerForge's apply_float8 converts in that model: attention's and the MLPs' projections, the head.
std::set<std::string> float8_weights() {
  std::set<std::string> names = {"output_head.proj.weight"};
  for (const std::string layer : {"layers.0.", "layers.1."}) {
    for (const std::string p : {"attention.q_proj", "attention.k_proj", "attention.v_proj", "attention.o_proj",
                                "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"}) {
      names.insert(layer + p + ".weight");
    }
  }
  return names;
}

struct Gathered {
  at::Tensor logits;
  int64_t bytes = 0;              ///< FullyShardedModel::gathered_bytes() after one forward
  int64_t float8_elements = 0;    ///< this rank's elements of the float8 weights
  int64_t other_bytes = 0;        ///< this rank's rows of the other parameters, in their dtype
  int64_t float8_weights = 0;
};

// One forward (under bf16 autocast, as a "fp8" step runs) of two FSDP ranks.
std::vector<Gathered> gather_on_two_ranks(bool float8, const at::Tensor& tokens) {
  std::vector<Gathered> out(2);
  const std::set<std::string> converted = float8 ? float8_weights() : std::set<std::string>{};
  const auto errors = on_two_ranks([&](const dist::Runtime& rt) {
    const auto model = seeded_transformer(float8);
    const dist::Group no_replicas;
    parallel::FullyShardedModel fsdp(*model, rt.dp(), no_replicas);
    Gathered& g = out[static_cast<size_t>(rt.rank())];
    {
      const at::NoGradGuard no_grad;
      const parallel::AutocastGuard autocast(at::kBFloat16);
      g.logits = fsdp.forward(tokens);
    }
    g.bytes = fsdp.gathered_bytes();
    for (const auto& shard : fsdp.shards()) {
      if (converted.count(shard.name)) {
        g.float8_elements += shard.tensor.numel();
        ++g.float8_weights;
      } else {
        g.other_bytes += shard.tensor.numel() * static_cast<int64_t>(shard.tensor.element_size());
      }
    }
  });
  EXPECT_EQ(errors, (std::vector<std::string>{"", ""}));
  return out;
}

TEST(FsdpFloat8Gather, TwoRanksComputeTheWholeModelsLogitsBitForBitAndSendHalfABf16GathersBytes) {
  at::manual_seed(9);
  const at::Tensor tokens = at::randint(50, {2, 12}, at::kLong);
  at::Tensor want;
  {
    const auto whole = seeded_transformer(true);
    const at::NoGradGuard no_grad;
    const parallel::AutocastGuard autocast(at::kBFloat16);
    want = whole->forward(tokens);
  }
  const auto ranks = gather_on_two_ranks(true, tokens);
  for (int rank = 0; rank < 2; ++rank) {
    const Gathered& g = ranks[static_cast<size_t>(rank)];
    // The same float8 operands (the shard owners agree on each weight's amax), so the same logits exactly.
    EXPECT_TRUE(at::equal(g.logits, want)) << "rank " << rank;
    // Each unit is gathered once in the first forward: a float8 weight's rows as one byte an element plus its shard's
    // amax (4 bytes, all-reduced), the others (norms, the embedding) in float32.
    ASSERT_EQ(g.float8_weights, 15) << "rank " << rank;
    EXPECT_EQ(g.bytes, g.float8_elements + 4 * g.float8_weights + g.other_bytes) << "rank " << rank;
    const double bf16 = 2.0 * static_cast<double>(g.float8_elements);
    std::cout << "[measured] rank " << rank << ": the float8 weights' gather sends "
              << g.float8_elements + 4 * g.float8_weights << " bytes, a bf16 gather of them " << bf16
              << ": ratio " << static_cast<double>(g.float8_elements + 4 * g.float8_weights) / bf16
              << "; this rank's whole gather " << g.bytes << " bytes\n";
  }
  // Without float8 the same parameters go in float32, 4 bytes an element.
  const auto plain = gather_on_two_ranks(false, tokens);
  for (int rank = 0; rank < 2; ++rank) {
    const Gathered& f = ranks[static_cast<size_t>(rank)];
    EXPECT_EQ(plain[static_cast<size_t>(rank)].bytes, 4 * f.float8_elements + f.other_bytes) << "rank " << rank;
  }
}

}  // namespace
}  // namespace kforge::test
