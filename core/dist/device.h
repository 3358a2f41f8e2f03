// Device: [train] device ("auto", "cpu", "cuda") and this process's local rank -> the one device the host puts
// the model, optimizer state, batches, collectives and RNG on; and the waits that make wall-clock timing honest
// on an asynchronous device.
#pragma once

#include <c10/core/Device.h>
#include <torch/nn/module.h>

#include <cstdint>
#include <string>

namespace kforge::dist {

/// What this process can run CUDA on.
struct CudaProbe {
  bool build = false;   ///< kforge was built with KFORGE_WITH_CUDA (a CUDA LibTorch and NCCL)
  int64_t devices = 0;  ///< CUDA devices visible to this process (after CUDA_VISIBLE_DEVICES)
};

/// This build and this process's CUDA devices.
CudaProbe probe_cuda();

/// "cpu" -> CPU; "cuda" -> cuda:local_rank, or sdk::ConfigError naming [train] device when this is a CPU build,
/// no device is visible or the local rank has none; "auto" -> cuda:local_rank when the build has CUDA and a device
/// is visible (the same error when the local rank has none), else CPU.
c10::Device choose_device(const std::string& setting, int64_t local_rank, const CudaProbe& cuda);

/// Makes `device` this thread's current device (a CUDA device's kernels and allocations go there by default).
void use_device(const c10::Device& device);

/// The device of `module`'s first parameter (the CPU when it has none).
c10::Device parameter_device(const torch::nn::Module& module);

/// Waits until the work queued on `device` has finished (nothing to wait for on the CPU): call it before reading a
/// clock that times device work.
void synchronize(const c10::Device& device);

}  // namespace kforge::dist
