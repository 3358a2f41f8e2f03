// Shared pieces of the interop tests (see interop_test_util.h).
#include "core/interop/interop_test_util.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "generate/checkpoint_model.h"
#include "support/max_abs_diff.h"
#include "support/npy.h"
#include "support/oracle.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test::interop {
namespace {

TrainFixture* trained(const std::vector<std::string>& extra, bool tokenizer) {
  auto* fx = new TrainFixture();  // lives for the whole test process
  std::vector<std::string> overrides = {"--train.max_steps=10", "--eval.enabled=false"};
  if (tokenizer) overrides.push_back("--data.tokenizer_path=" + tiny_tokenizer(fx->root).string());
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  fx->run(overrides, {});
  return fx;
}

}  // namespace

const TrainFixture& dense_fixture() {
  static TrainFixture* fx = trained({}, true);
  return *fx;
}

const std::filesystem::path& trained_dense() {
  static const std::filesystem::path dir = dense_fixture().checkpoint_dir / "step_10";
  return dir;
}

const std::filesystem::path& trained_moe() {
  static const std::filesystem::path dir =
      trained({"--model.num_experts=4", "--model.moe_top_k=2"}, false)->checkpoint_dir / "step_10";
  return dir;
}

std::string kforge_cli(const std::string& args, int* rc) {
  std::string output;
  *rc = run_command(fmt::format("{} {} 2>&1", KFORGE_BIN, args), &output);
  return output;
}

at::Tensor test_tokens() {
  std::vector<int64_t> ids;
  for (int r = 0; r < 2; ++r) {
    for (int i = 0; i < 12; ++i) ids.push_back((i * 13 + r * 29 + 5) % 64);
  }
  return at::tensor(ids, at::kLong).view({2, 12});
}

at::Tensor kforge_logits(const std::filesystem::path& dir, const at::Tensor& tokens) {
  const auto host = load_builtin_plugins();
  auto ckpt = generate::load_checkpoint_model(dir, host->registry);
  at::NoGradGuard no_grad;
  ckpt.model->eval();
  return ckpt.model->forward(tokens).to(at::kDouble);
}

at::Tensor oracle_logits(const std::filesystem::path& hf_dir, const at::Tensor& tokens) {
  const std::filesystem::path work = temp_dir("hf_oracle");
  write_npy(work / "tokens.npy", tokens.contiguous());
  std::string output;
  const int rc =
      run_oracle("hf_llama.py",
                 {"logits", hf_dir.string(), (work / "tokens.npy").string(), (work / "logits.npy").string()}, &output);
  EXPECT_EQ(rc, 0) << output;
  if (rc != 0) return at::Tensor();
  return read_npy(work / "logits.npy");
}

double logit_error(const at::Tensor& ours, const at::Tensor& theirs, const std::string& label) {
  if (!theirs.defined()) return std::numeric_limits<double>::infinity();  // the oracle failed, and said so
  const double diff = max_abs_diff(ours, theirs), scale = std::max(1.0, theirs.abs().max().item<double>());
  std::cout << "[measured] " << label << ": max |kforge - HF oracle| logits = " << diff << ", " << diff / scale
            << " of max(1, max |logit|) = " << scale << "\n";
  return diff / scale;
}

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace kforge::test::interop
