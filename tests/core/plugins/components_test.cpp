// Components with the built-in plugins: every lookup goes through Registry::get (a missing name gets
// the known names and "did you mean"), and the selected optimizer's declared capabilities.
#include <gtest/gtest.h>

#include "kforge/sdk/abi.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

constexpr const char* kDenseModel = "[model]\ndim = 8\nn_layers = 1\nn_heads = 2\nvocab_size = 16\n";

TEST(Components, AnUnknownNameGetsTheKnownNamesAndTheClosestOne) {
  ComponentHost h(kDenseModel);  // a dense model may name any router; it is looked up only when built
  try {
    h.components.make_router("softmax_topkk", {8, 4, 2});
    FAIL() << "expected sdk::ConfigError";
  } catch (const sdk::ConfigError& e) {
    const std::string message = e.what();
    for (const char* part : {"[model] moe_router = \"softmax_topkk\": no router 'softmax_topkk' in the loaded plugins.",
                             "softmax_topk (libkforge_routers.so 1.0.0)", "Did you mean 'softmax_topk'?"}) {
      EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
    }
  }
}

TEST(Components, OptimizerCapabilitiesAreTheSelectedOptimizersDeclaration) {
  const auto capabilities = [](const char* optimizer) {
    return ComponentHost(std::string(kDenseModel) + "[optimizer]\nname = \"" + optimizer + "\"\n")
        .components.optimizer_capabilities();
  };
  EXPECT_EQ(capabilities("muon"), KFORGE_CAP_NEEDS_WHOLE_MATRICES);
  EXPECT_EQ(capabilities("schedule_free_adamw"), KFORGE_CAP_HAS_EVAL_WEIGHTS);
  EXPECT_EQ(capabilities("adamw"), 0u);
}

}  // namespace
}  // namespace kforge::test
