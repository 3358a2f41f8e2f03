// The training device decision and device waits (see device.h).
#include "dist/device.h"

#include <ATen/Context.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <fmt/format.h>

#include <cstdlib>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

std::string visible_devices() {
  const char* v = std::getenv("CUDA_VISIBLE_DEVICES");
  return v == nullptr ? "unset" : fmt::format("\"{}\"", v);
}

c10::Device local_cuda_device(int64_t local_rank, const CudaProbe& cuda, const std::string& setting) {
  if (local_rank >= cuda.devices) {
    throw sdk::ConfigError(fmt::format(
        "[train] device = \"{}\": local rank {} has no GPU of its own ({} visible, CUDA_VISIBLE_DEVICES {}); launch "
        "at most {} ranks per node",
        setting, local_rank, cuda.devices, visible_devices(), cuda.devices));
  }
  return {c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(local_rank)};
}

}  // namespace

CudaProbe probe_cuda() {
  CudaProbe probe;
#ifdef KFORGE_WITH_CUDA
  probe.build = true;
#endif
  probe.devices = at::hasCUDA() ? static_cast<int64_t>(at::getNumGPUs()) : 0;
  return probe;
}

c10::Device choose_device(const std::string& setting, int64_t local_rank, const CudaProbe& cuda) {
  if (setting == "cpu") return c10::Device(c10::DeviceType::CPU);
  if (setting == "cuda") {
    if (!cuda.build) {
      throw sdk::ConfigError(
          "[train] device = \"cuda\": this kforge is a CPU build (LibTorch without CUDA); rebuild it against a CUDA "
          "LibTorch with cmake -DKFORGE_WITH_CUDA=ON, or set [train] device = \"cpu\" or \"auto\"");
    }
    if (cuda.devices == 0) {
      throw sdk::ConfigError(fmt::format(
          "[train] device = \"cuda\": no CUDA device is visible to this process (CUDA_VISIBLE_DEVICES {}); check "
          "nvidia-smi and the job's GPU allocation, or set [train] device = \"cpu\" or \"auto\"",
          visible_devices()));
    }
    return local_cuda_device(local_rank, cuda, setting);
  }
  if (setting == "auto") {
    if (cuda.build && cuda.devices > 0) return local_cuda_device(local_rank, cuda, setting);
    return c10::Device(c10::DeviceType::CPU);
  }
  throw sdk::ConfigError(fmt::format("[train] device = \"{}\": expected \"auto\", \"cpu\" or \"cuda\"", setting));
}

void use_device(const c10::Device& device) {
  if (device.is_cpu()) return;
  const c10::impl::VirtualGuardImpl guard(device.type());
  guard.setDevice(device);
}

c10::Device parameter_device(const torch::nn::Module& module) {
  const std::vector<at::Tensor> params = module.parameters();
  return params.empty() ? c10::Device(c10::DeviceType::CPU) : params.front().device();
}

void synchronize(const c10::Device& device) {
  if (device.is_cpu()) return;
  const c10::impl::VirtualGuardImpl guard(device.type());
  c10::Stream stream = guard.getStream(device);
  stream.synchronize();
}

}  // namespace kforge::dist
