// The training device decision ([train] device, the local rank, what the build and the process have), the batch's
// move to a device, and the device waits: CPU here, cuda:LOCAL_RANK only in a CUDA build with a GPU per local rank.
#include "dist/device.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <string>

#include "data/batch.h"
#include "kforge/sdk/error.h"

namespace kforge::test {
namespace {

std::string refusal(const std::string& setting, int64_t local_rank, const dist::CudaProbe& cuda) {
  try {
    const c10::Device chosen = dist::choose_device(setting, local_rank, cuda);
    return "chose " + chosen.str();
  } catch (const sdk::ConfigError& e) {
    return e.what();
  }
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' in: " << text;
}

TEST(Device, AutoTakesTheLocalRanksGpuOnlyInACudaBuildThatSeesOne) {
  const dist::CudaProbe cpu_build{false, 0}, cpu_build_on_gpu_node{false, 4}, no_gpu{true, 0}, four{true, 4};
  EXPECT_EQ(dist::choose_device("auto", 0, cpu_build), c10::Device(c10::kCPU));
  EXPECT_EQ(dist::choose_device("auto", 2, cpu_build_on_gpu_node), c10::Device(c10::kCPU));
  EXPECT_EQ(dist::choose_device("auto", 0, no_gpu), c10::Device(c10::kCPU));
  EXPECT_EQ(dist::choose_device("auto", 3, four), c10::Device(c10::kCUDA, 3));
  EXPECT_EQ(dist::choose_device("cuda", 1, four), c10::Device(c10::kCUDA, 1));
  EXPECT_EQ(dist::choose_device("cpu", 1, four), c10::Device(c10::kCPU));
}

TEST(Device, CudaWithoutAGpuOfItsOwnIsRefusedNamingTheKeyAndWhy) {
  const std::string cpu_build = refusal("cuda", 0, {false, 0});
  expect_contains(cpu_build, "[train] device = \"cuda\": this kforge is a CPU build");
  expect_contains(cpu_build, "-DKFORGE_WITH_CUDA=ON");
  expect_contains(refusal("cuda", 0, {true, 0}), "[train] device = \"cuda\": no CUDA device is visible");
  // More ranks on a node than GPUs: refused under "auto" too, never two ranks on one GPU.
  for (const char* setting : {"cuda", "auto"}) {
    const std::string crowded = refusal(setting, 2, {true, 2});
    expect_contains(crowded, "local rank 2 has no GPU of its own (2 visible");
    expect_contains(crowded, "launch at most 2 ranks per node");
  }
  expect_contains(refusal("tpu", 0, {true, 1}), "[train] device = \"tpu\": expected \"auto\", \"cpu\" or \"cuda\"");
}

TEST(Device, ThisCpuBuildProbesNoCudaAndTrainsOnTheCpu) {
  const dist::CudaProbe here = dist::probe_cuda();
  EXPECT_FALSE(here.build) << "this test expects a CPU build of kforge";
  EXPECT_EQ(here.devices, 0);
  EXPECT_EQ(dist::choose_device("auto", 0, here), c10::Device(c10::kCPU));
  dist::synchronize(c10::Device(c10::kCPU));  // nothing to wait for, and no CUDA call
  dist::use_device(c10::Device(c10::kCPU));
}

TEST(Device, ABatchMovesEveryTensorItHasAndKeepsItOnTheCpu) {
  data::Batch batch;
  batch.input_ids = at::arange(6, at::kLong).view({2, 3});
  batch.labels = at::arange(1, 7, at::kLong).view({2, 3});
  batch.frame_times = at::rand({2, 4});
  const data::Batch same = data::on_device(batch, c10::Device(c10::kCPU));
  EXPECT_TRUE(same.input_ids.is_same(batch.input_ids));
  EXPECT_TRUE(same.frame_times.is_same(batch.frame_times));
  // The meta device stands in for an accelerator here: every defined tensor goes there, the others stay undefined.
  const data::Batch moved = data::on_device(batch, c10::Device(c10::kMeta));
  for (const at::Tensor* t : {&moved.input_ids, &moved.labels, &moved.frame_times}) {
    EXPECT_TRUE(t->is_meta());
  }
  EXPECT_EQ(moved.labels.sizes(), batch.labels.sizes());
  EXPECT_EQ(moved.frame_times.scalar_type(), at::kFloat);
  for (const at::Tensor* t : {&moved.sources, &moved.doc_ids, &moved.pixel_values, &moved.frame_mask}) {
    EXPECT_FALSE(t->defined());
  }
}

TEST(Device, AModulesDeviceIsItsFirstParameters) {
  torch::nn::Module empty;
  EXPECT_EQ(dist::parameter_device(empty), c10::Device(c10::kCPU));
  torch::nn::Linear linear(2, 3);
  EXPECT_EQ(dist::parameter_device(*linear), c10::Device(c10::kCPU));
  torch::nn::Module elsewhere;
  elsewhere.register_parameter("w", at::empty({2}, at::TensorOptions().device(c10::kMeta)));
  EXPECT_EQ(dist::parameter_device(elsewhere), c10::Device(c10::kMeta));
}

}  // namespace
}  // namespace kforge::test
