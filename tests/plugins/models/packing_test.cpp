// Packed rows through the whole model ([data] pack_sequences): with the documents set, a packed row's summed
// cross-entropy and its parameter gradients equal those of its documents run one by one, for every attention
// backend (tiled flash, explicit with the fused causal softmax, explicit with the composite) and the MoE model;
// the packed logits and gradients equal tests/oracles/llama_reference.py's explicit block-diagonal mask.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "model_builder.h"
#include "support/npy.h"
#include "support/oracle.h"

namespace kforge::test::models {
namespace {

constexpr int64_t kEos = 2;
constexpr int64_t kIgnore = -100;

// Windows of S + 1 tokens whose EOS positions are given; tokens elsewhere drawn from [3, vocab).
struct Packed {
  at::Tensor input, labels, doc_ids;                                ///< [B, S]
  std::vector<std::vector<std::pair<int64_t, int64_t>>> documents;  ///< per row, [begin, end) input positions
};

// KempnerForge's rule, written out: the document id increments after each EOS input; the label of an EOS
// input (the next document's first token) is ignored.
Packed pack(int64_t vocab, int64_t seq, const std::vector<std::vector<int64_t>>& eos_positions) {
  Packed p;
  const int64_t batch = static_cast<int64_t>(eos_positions.size());
  at::Tensor window = at::randint(3, vocab, {batch, seq + 1}, at::kLong);
  p.doc_ids = at::zeros({batch, seq}, at::kLong);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t : eos_positions[b]) window[b][t] = kEos;
  }
  p.input = window.narrow(1, 0, seq).contiguous();
  p.labels = window.narrow(1, 1, seq).clone();
  for (int64_t b = 0; b < batch; ++b) {
    int64_t doc = 0, begin = 0;
    p.documents.emplace_back();
    for (int64_t t = 0; t < seq; ++t) {
      p.doc_ids[b][t] = doc;
      if (p.input[b][t].item<int64_t>() == kEos) {
        p.labels[b][t] = kIgnore;
        p.documents[b].emplace_back(begin, t + 1);
        begin = t + 1;
        ++doc;
      }
    }
    if (begin < seq) p.documents[b].emplace_back(begin, seq);
  }
  return p;
}

at::Tensor summed_ce(const at::Tensor& logits, const at::Tensor& labels) {
  return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), labels.reshape({-1}), {}, at::Reduction::Sum,
                                kIgnore);
}

std::map<std::string, at::Tensor> take_grads(sdk::Model& model) {
  std::map<std::string, at::Tensor> out;
  for (auto& p : model.named_parameters()) {
    out[p.key()] = p.value().grad().defined() ? p.value().grad().clone() : at::zeros_like(p.value());
    if (p.value().grad().defined()) p.value().mutable_grad().zero_();
  }
  return out;
}

const std::string kShape =
    "[model]\ndim = 32\nn_layers = 2\nn_heads = 4\nn_kv_heads = 2\nvocab_size = 50\nmax_seq_len = 256\n"
    "init_std = 0.1\n";

// Row 0: an EOS first, documents across the 64-key tiles and the 128-query blocks, two EOS in a row, an EOS
// last; row 1: no EOS at all until late; S = 150.
const std::vector<std::vector<int64_t>> kEosPositions = {{0, 70, 71, 140, 149}, {120}};

class PackedLoss : public ::testing::TestWithParam<std::pair<const char*, std::string>> {};

// fp32: each document's CE is a sum over its tokens and the packed one the same terms; they differ by
// float32 rounding of the model's reductions (dim 32, <= 150 keys) and of the two summations, ~1e-6
// relative: 1e-5 relative for the loss; gradients within 1e-5 of their largest magnitude (as the
// kernel tests).
TEST_P(PackedLoss, EqualsTheSumOfItsDocumentsRunSeparately) {
  torch::manual_seed(3);
  auto model = build_model(kShape + GetParam().second);
  const Packed p = pack(50, 150, kEosPositions);
  model->set_documents(p.doc_ids);
  const at::Tensor packed = summed_ce(model->forward(p.input), p.labels);
  packed.backward();
  const auto packed_grads = take_grads(*model);

  model->set_documents(at::Tensor());
  double separate = 0;
  int64_t documents = 0;
  for (size_t b = 0; b < p.documents.size(); ++b) {
    for (const auto& [begin, end] : p.documents[b]) {
      const at::Tensor tokens = p.input[b].slice(0, begin, end).unsqueeze(0);
      const at::Tensor loss = summed_ce(model->forward(tokens), p.labels[b].slice(0, begin, end).unsqueeze(0));
      loss.backward();
      separate += loss.item<double>();
      ++documents;
    }
  }
  EXPECT_EQ(documents, 7);
  const auto separate_grads = take_grads(*model);
  EXPECT_NEAR(packed.item<double>(), separate, 1e-5 * std::abs(separate));
  for (const auto& [name, want] : separate_grads) {
    const double scale = std::max(1e-3, want.abs().max().item<double>());
    EXPECT_LE((packed_grads.at(name) - want).abs().max().item<double>(), 1e-5 * scale) << name;
  }
  std::printf("[packing] %s: packed %.6f, documents %.6f\n", GetParam().first, packed.item<double>(), separate);
}

INSTANTIATE_TEST_SUITE_P(
    Backends, PackedLoss,
    ::testing::Values(std::pair{"flash", std::string("sdpa_backend = \"flash\"\n")},
                      std::pair{"math_fused", std::string("sdpa_backend = \"math\"\n")},
                      std::pair{"math_composite", std::string("sdpa_backend = \"math\"\nfused_kernels = false\n")},
                      std::pair{"auto_qk_norm", std::string("qk_norm = true\n")},
                      std::pair{"moe_flash", std::string("num_experts = 4\nmoe_top_k = 2\nsdpa_backend = \"flash\"\n")},
                      std::pair{"moe_math", std::string("num_experts = 4\nmoe_top_k = 2\nsdpa_backend = \"math\"\n")}),
    [](const auto& info) { return std::string(info.param.first); });

// Unset documents restore plain causal attention: the same logits as a model that never had them.
TEST(PackedLoss, UnsettingDocumentsRestoresCausalAttention) {
  torch::manual_seed(3);
  auto model = build_model(kShape);
  const Packed p = pack(50, 40, {{5, 20}});
  const at::Tensor plain = model->forward(p.input);
  model->set_documents(p.doc_ids);
  const at::Tensor packed = model->forward(p.input);
  model->set_documents(at::Tensor());
  EXPECT_TRUE(model->forward(p.input).equal(plain));
  EXPECT_FALSE(packed.equal(plain));
  model->set_documents(p.doc_ids.narrow(1, 0, 39));
  EXPECT_THROW(model->forward(p.input), sdk::Error);  // ids of another shape than the tokens
}

// Against python3-torch with an explicit [B, 1, S, S] block-diagonal mask and per-document positions
// (float64): the oracle test's tolerance, atol 1e-5 + rtol 1e-4.
TEST(PackedLoss, MatchesTheBlockDiagonalReference) {
  ASSERT_TRUE(oracle_available()) << "/usr/bin/python3 with torch and numpy is required";
  torch::manual_seed(5);
  auto model = build_model(kShape + "qk_norm = true\n");
  const Packed p = pack(50, 150, kEosPositions);
  const auto dir = temp_dir("packing_oracle");
  write_npy(dir / "tokens.npy", p.input);
  write_npy(dir / "targets.npy", p.labels);
  write_npy(dir / "doc_ids.npy", p.doc_ids);
  for (const auto& param : model->named_parameters()) write_npy(dir / (param.key() + ".npy"), param.value());
  std::ofstream(dir / "config.json")
      << R"({"dim": 32, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "norm_type": "rmsnorm", "norm_eps": 1e-5,
             "activation": "silu", "rope_theta": 10000.0, "tie_embeddings": false, "qk_norm": true})";
  model->set_documents(p.doc_ids);
  const at::Tensor logits = model->forward(p.input);
  const at::Tensor loss = at::cross_entropy_loss(logits.reshape({-1, 50}), p.labels.reshape({-1}));
  loss.backward();
  std::string out;
  ASSERT_EQ(run_oracle("llama_reference.py", {dir.string()}, &out), 0) << out;
  const auto close = [](const at::Tensor& got, const at::Tensor& want, const std::string& what) {
    expect_within(got, want, what, 1e-5, 1e-4);
  };
  close(logits.detach(), read_npy(dir / "logits.npy"), "logits");
  close(loss.detach().reshape({1}), read_npy(dir / "loss.npy"), "loss");
  for (const auto& param : model->named_parameters()) {
    close(param.value().grad(), read_npy(dir / ("grad." + param.key() + ".npy")), "grad of " + param.key());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kforge::test::models
