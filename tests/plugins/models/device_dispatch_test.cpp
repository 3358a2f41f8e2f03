// The model kernels' device dispatch: CPU tensors take kforge's fused CPU kernels (tiled attention, RMSNorm, the
// oneDNN linear, the fused causal softmax and SwiGLU), tensors on another device LibTorch's own ops (its fused
// attention where the LibTorch has one, else the explicit product; the composites elsewhere). The meta device stands
// in for an accelerator: it runs no arithmetic, but a CPU kernel or a CPU tensor mixed into its ops fails.
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include "transformer/attention.h"
#include "transformer/blas_gemm.h"
#include "transformer/causal_softmax.h"
#include "transformer/flash_attention.h"
#include "transformer/library_attention.h"
#include "transformer/linear.h"
#include "transformer/rms_norm_kernel.h"
#include "transformer/swiglu.h"

namespace kforge::test {
namespace {

using namespace builtin::models;

at::TensorOptions on(c10::DeviceType device) { return at::TensorOptions().device(device); }

TEST(DeviceDispatch, CpuTensorsTakeTheCpuKernels) {
  const at::Tensor q = at::randn({2, 4, 16, 8}), x = at::randn({2, 16, 32}), w = at::randn({32}),
                   proj = at::randn({8, 32});
  EXPECT_TRUE(flash_attention_supports(q));
  EXPECT_TRUE(use_tiled_attention("auto", q, 16)) << "fp32 on the CPU: the tiled kernel";
  EXPECT_FALSE(use_library_attention(q, 16));
  EXPECT_TRUE(fused_rms_norm_applies(x, w));
  EXPECT_EQ(onednn_linear_applies(x, proj), onednn_gemm_available());
}

TEST(DeviceDispatch, AnotherDevicesTensorsTakeLibTorchsOps) {
  const at::Tensor q = at::empty({2, 4, 16, 8}, on(c10::kMeta)), x = at::empty({2, 16, 32}, on(c10::kMeta));
  const at::Tensor w = at::empty({32}, on(c10::kMeta)), proj = at::empty({8, 32}, on(c10::kMeta));
  EXPECT_FALSE(flash_attention_supports(q));
  EXPECT_FALSE(use_tiled_attention("flash", q, 16)) << "even when asked for: the tiled kernel is the CPU's";
  EXPECT_EQ(use_library_attention(q, 16), TORCH_VERSION_MAJOR >= 2) << "LibTorch's fused attention, from 2.0 on";
  EXPECT_FALSE(use_library_attention(q, 20)) << "a KV cache's decoding takes the explicit product";
  EXPECT_FALSE(fused_rms_norm_applies(x, w));
  EXPECT_FALSE(onednn_linear_applies(x, proj));
  EXPECT_FALSE(bf16_linear_applies(x, proj));
}

TEST(DeviceDispatch, TheExplicitAttentionSoftmaxAndSwigluRunOnAnotherDevice) {
  const at::Tensor q = at::empty({2, 4, 16, 8}, on(c10::kMeta)), kv = at::empty({2, 2, 16, 8}, on(c10::kMeta));
  const at::Tensor out = causal_attention(q, kv, kv, /*fused=*/true);
  EXPECT_TRUE(out.is_meta());
  EXPECT_EQ(out.sizes(), q.sizes());
  const at::Tensor scores = at::empty({2, 16, 16}, on(c10::kMeta));
  EXPECT_TRUE(causal_softmax(scores, 0.5, 16, /*fused=*/true).is_meta());
  const at::Tensor gate = at::empty({3, 5}, on(c10::kMeta)).requires_grad_();
  const at::Tensor y = swiglu(gate, at::empty({3, 5}, on(c10::kMeta)), /*fused=*/true);
  y.sum().backward();
  EXPECT_TRUE(y.is_meta() && gate.grad().is_meta());
  EXPECT_THROW(swiglu(gate, at::empty({3, 5})), std::exception) << "tensors on two devices";
}

}  // namespace
}  // namespace kforge::test
