// The built-in kernels on LibTorch's threads: at::parallel_for, compiled as the plugins are, spreads its range over
// them (LibTorch's inline OpenMP templates run everything on the calling thread in code built without OpenMP), and
// RMSNorm, SwiGLU, RoPE, the causal softmax and the tiled attention give on two threads exactly what they give on one.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "transformer/causal_softmax.h"
#include "transformer/flash_attention.h"
#include "transformer/rms_norm_kernel.h"
#include "transformer/rope.h"
#include "transformer/rope_kernel.h"
#include "transformer/swiglu.h"

namespace kforge::test {
namespace {

/// Runs `body` with LibTorch's intra-op thread count at `threads`, then restores it.
template <class Body>
auto with_threads(int threads, const Body& body) {
  const int original = at::get_num_threads();
  at::set_num_threads(threads);
  struct Restore {
    int threads;
    ~Restore() { at::set_num_threads(threads); }
  } restore{original};
  return body();
}

TEST(ParallelKernels, ParallelForSpreadsOverLibTorchsThreadsInCodeBuiltLikeThePlugins) {
  std::set<int> threads_seen;
  std::mutex mutex;
  with_threads(2, [&] {
    at::parallel_for(0, 2, 1, [&](int64_t, int64_t) {
      const std::lock_guard<std::mutex> lock(mutex);
      threads_seen.insert(at::get_thread_num());
    });
    return 0;
  });
  EXPECT_EQ(threads_seen, (std::set<int>{0, 1})) << "at::parallel_for ran its two items on one thread";
}

/// The output and every input gradient of `op`, with `probe` as the upstream gradient.
std::vector<at::Tensor> value_and_grads(const std::function<at::Tensor(const std::vector<at::Tensor>&)>& op,
                                        const std::vector<at::Tensor>& inputs, const at::Tensor& probe) {
  std::vector<at::Tensor> leaves;
  for (const at::Tensor& input : inputs) leaves.push_back(input.detach().clone().requires_grad_());
  const at::Tensor out = op(leaves);
  out.backward(probe);
  std::vector<at::Tensor> result{out.detach()};
  for (const at::Tensor& leaf : leaves) result.push_back(leaf.grad());
  return result;
}

/// `op`'s value and gradients on two threads equal, bit for bit, those on one: each kernel splits its work into
/// items whose results do not depend on which thread computes them.
void expect_same_on_one_and_two_threads(const std::function<at::Tensor(const std::vector<at::Tensor>&)>& op,
                                        const std::vector<at::Tensor>& inputs, const at::Tensor& probe) {
  const auto one = with_threads(1, [&] { return value_and_grads(op, inputs, probe); });
  const auto two = with_threads(2, [&] { return value_and_grads(op, inputs, probe); });
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) {
    SCOPED_TRACE(i == 0 ? "value" : "gradient of input " + std::to_string(i - 1));
    EXPECT_TRUE(at::equal(one[i], two[i])) << "max difference " << (one[i] - two[i]).abs().max().item<double>();
  }
}

TEST(ParallelKernels, RmsNormGivesTheOneThreadResultOnTwoThreads) {
  at::manual_seed(21);
  const at::Tensor x = at::randn({4, 300, 96}), w = at::rand({96}) + 0.5;  // 1200 rows: 19 gradient row blocks
  expect_same_on_one_and_two_threads([](const auto& in) { return builtin::models::fused_rms_norm(in[0], in[1], 1e-5); },
                                     {x, w}, at::randn_like(x));
}

TEST(ParallelKernels, SwiGluGivesTheOneThreadResultOnTwoThreads) {
  at::manual_seed(22);
  const at::Tensor gate = at::randn({4, 512, 96}), up = at::randn({4, 512, 96});  // 196,608 elements: 6 grains
  expect_same_on_one_and_two_threads([](const auto& in) { return builtin::models::swiglu(in[0], in[1]); }, {gate, up},
                                     at::randn_like(gate));
}

TEST(ParallelKernels, RopeGivesTheOneThreadResultOnTwoThreads) {
  at::manual_seed(25);
  const at::Tensor x = at::randn({4, 512, 8, 64});  // (B, S, H, hd): 16,384 rows, 32 grains
  builtin::models::RopeTables tables(64, 512, 10000.0);
  const auto [cos, sin] = tables.slice(512, x);
  expect_same_on_one_and_two_threads(
      [&](const auto& in) { return builtin::models::fused_rope(in[0].transpose(1, 2), cos, sin); }, {x},
      at::randn({4, 8, 512, 64}));
}

TEST(ParallelKernels, CausalSoftmaxGivesTheOneThreadResultOnTwoThreads) {
  at::manual_seed(23);
  const at::Tensor scores = at::randn({2, 4, 128, 128});
  expect_same_on_one_and_two_threads([](const auto& in) { return builtin::models::causal_softmax(in[0], 0.125, 128); },
                                     {scores}, at::randn_like(scores));
}

TEST(ParallelKernels, TiledAttentionGivesTheOneThreadResultOnTwoThreads) {
  at::manual_seed(24);
  const at::Tensor q = at::randn({2, 4, 200, 32}), k = at::randn({2, 2, 200, 32}), v = at::randn({2, 2, 200, 32});
  expect_same_on_one_and_two_threads(
      [](const auto& in) { return builtin::models::flash_attention(in[0], in[1], in[2]); }, {q, k, v},
      at::randn_like(q));
}

}  // namespace
}  // namespace kforge::test
