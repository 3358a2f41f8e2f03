// load_hf_tensors: name-checked, shape-checked copy of checkpoint tensors into parameters.
#include "hf_tensors.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <set>

namespace kforge::vision {

std::vector<std::string> load_hf_tensors(torch::nn::Module& module, const std::map<std::string, at::Tensor>& tensors,
                                         const std::string& origin) {
  const auto params = module.named_parameters(/*recurse=*/true);
  std::string missing, mismatched;
  std::set<std::string> used;
  for (const auto& p : params) {
    auto it = tensors.find(p.key());
    if (it == tensors.end()) {
      missing += "\n  " + p.key() + " " + c10::str(p.value().sizes());
      continue;
    }
    used.insert(p.key());
    if (it->second.sizes() != p.value().sizes()) {
      mismatched +=
          "\n  " + p.key() + ": expected " + c10::str(p.value().sizes()) + ", found " + c10::str(it->second.sizes());
    }
  }
  if (!missing.empty() || !mismatched.empty()) {
    std::string message = origin + " does not fit the vision encoder:";
    if (!missing.empty()) message += "\nmissing tensors (name, expected shape):" + missing;
    if (!mismatched.empty()) message += "\ntensors of the wrong shape:" + mismatched;
    message += "\n(is [vision_encoder] type the checkpoint's tower, and config.json its config?)";
    throw sdk::Error(message);
  }
  {
    at::NoGradGuard no_grad;
    for (const auto& p : params) p.value().copy_(tensors.at(p.key()));
  }
  std::vector<std::string> unused;
  for (const auto& [name, tensor] : tensors)
    if (used.count(name) == 0) unused.push_back(name);
  return unused;
}

}  // namespace kforge::vision
