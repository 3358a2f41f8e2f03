// VisionEncoder: the frozen (no autograd) forward shared by every encoder.
#include "vision_encoder.h"

#include <ATen/core/grad_mode.h>

namespace kforge::vision {

at::Tensor VisionEncoder::forward_frozen(const at::Tensor& pixels) {
  at::NoGradGuard no_grad;
  return forward(pixels);
}

}  // namespace kforge::vision
