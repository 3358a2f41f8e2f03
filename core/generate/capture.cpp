#include "generate/capture.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::generate {

std::map<std::string, at::Tensor> capture(sdk::Model& model, const at::Tensor& tokens,
                                          const std::vector<std::string>& points, at::Tensor* output) {
  std::map<std::string, at::Tensor> values;
  std::vector<std::string> repeated;
  model.set_capture(points, [&](const std::string& point, const at::Tensor& value) {
    if (values.count(point)) repeated.push_back(point);
    values[point] = value.to(value.is_floating_point() ? at::kFloat : at::kLong).contiguous();
  });
  try {
    model.eval();
    const at::NoGradGuard no_grad;
    const at::Tensor logits = model.forward(tokens);
    if (output) *output = logits.to(at::kFloat).contiguous();
  } catch (...) {
    model.set_capture({}, {});
    throw;
  }
  model.set_capture({}, {});
  for (const std::string& point : points) {
    if (!values.count(point)) {
      throw sdk::Error(fmt::format("the model declares hook point '{}' but its forward did not deliver it", point));
    }
  }
  if (!repeated.empty()) {
    throw sdk::Error(fmt::format("the model delivered hook point '{}' more than once in one forward", repeated[0]));
  }
  return values;
}

std::vector<std::string> hook_point_names(const std::vector<std::string>& patterns, int64_t n_layers) {
  static const std::string slot = "{layer}";
  std::vector<std::string> names;
  for (const std::string& pattern : patterns) {
    const size_t at = pattern.find(slot);
    if (at == std::string::npos) {
      names.push_back(pattern);
      continue;
    }
    for (int64_t layer = 0; layer < n_layers; ++layer) {
      names.push_back(pattern.substr(0, at) + std::to_string(layer) + pattern.substr(at + slot.size()));
    }
  }
  return names;
}

}  // namespace kforge::generate
