// A hook that keeps a copy of chosen parameters after every step, to check which ones moved.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "kforge/sdk/hook.h"
#include "kforge/sdk/model.h"

namespace kforge::test {

class WeightRecorder final : public sdk::Hook {
 public:
  /// Parameters whose full name starts with one of `prefixes` are recorded.
  explicit WeightRecorder(std::vector<std::string> prefixes) : prefixes_(std::move(prefixes)) {}

  void on_step_end(const sdk::StepEvent& event) override {
    for (const auto& item : event.model->named_parameters(/*recurse=*/true)) {
      dtypes[item.key()] = item.value().scalar_type();
      for (const auto& prefix : prefixes_) {
        if (item.key().rfind(prefix, 0) == 0) weights[event.step][item.key()] = item.value().detach().clone();
      }
    }
  }

  /// Whether every recorded parameter with `prefix` is bit-identical at steps `a` and `b`. A test
  /// failure when no recorded parameter has `prefix` (a renamed parameter must not pass as "changed").
  bool unchanged(const std::string& prefix, int64_t a, int64_t b) const {
    bool any = false;
    bool same = true;
    for (const auto& [name, w] : weights.at(a)) {
      if (name.rfind(prefix, 0) != 0) continue;
      any = true;
      same = same && at::equal(w, weights.at(b).at(name));
    }
    if (!any) ADD_FAILURE() << "no recorded parameter starts with '" << prefix << "'";
    return any && same;
  }

  std::map<int64_t, std::map<std::string, at::Tensor>> weights;  ///< step -> name -> value
  std::map<std::string, at::ScalarType> dtypes;                    ///< every parameter's dtype

 private:
  std::vector<std::string> prefixes_;
};

}  // namespace kforge::test
