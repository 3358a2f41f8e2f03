// AdamW off the CPU: which kernel takes a device's tensors (LibTorch's fused one where it has it, never the CPU's),
// and an AdamW built as the host builds it stepping parameters on another device with its state kept there. The meta
// device stands in for an accelerator: it runs no arithmetic, but any CPU tensor or CPU-only kernel mixed in fails.
#include "../../plugins/optimizers/device_adamw.h"  // compiled into this test (see CMakeLists.txt)

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/version.h>

#include "plugins/optimizers/adamw_fixture.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

at::Tensor on(const c10::Device& device) { return at::zeros({3, 4}, at::TensorOptions().device(device)); }

TEST(DeviceAdamW, LibTorchsFusedKernelTakesDeviceTensorsOnlyWhereTheLibTorchHasIt) {
  using builtin::optimizers::device_fused_adamw_supports;
  const c10::Device cpu(c10::kCPU), meta(c10::kMeta);
  const bool has_kernel = TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1);
  EXPECT_FALSE(device_fused_adamw_supports(on(cpu), on(cpu), on(cpu))) << "the CPU has its own fused kernel";
  EXPECT_EQ(device_fused_adamw_supports(on(meta), on(meta), on(meta)), has_kernel);
  EXPECT_FALSE(device_fused_adamw_supports(on(meta), on(cpu), on(meta))) << "a gradient on another device";
  EXPECT_FALSE(device_fused_adamw_supports(on(meta), on(meta).to(at::kDouble), on(meta)));
}

TEST(DeviceAdamW, StepsParametersOnAnotherDeviceAndKeepsItsStateThere) {
  ComponentHost h(AdamWFixture::toml(1e-2, 0.1, false), {"--optimizer.fused=true"});
  const at::TensorOptions meta = at::TensorOptions().device(c10::kMeta);
  std::vector<sdk::NamedParameter> params{{"layers.0.w.weight", at::empty({4, 3}, meta).requires_grad_()},
                                          {"norm.weight", at::empty({4}, meta).requires_grad_()}};
  auto opt = h.components.optimizer(params);
  for (int step = 0; step < 2; ++step) {
    for (auto& p : params) p.tensor.mutable_grad() = at::empty_like(p.tensor);
    opt->step();
  }
  for (const auto& p : params) EXPECT_TRUE(p.tensor.is_meta()) << p.name;
  for (const auto& [key, value] : opt->state_dict()) {
    if (value.dim() > 0) EXPECT_TRUE(value.is_meta()) << key << " is on " << value.device();
  }
}

}  // namespace
}  // namespace kforge::test
