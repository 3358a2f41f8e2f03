// The optimizer plugin refuses the [optimizer] values an optimizer cannot use (every optimizer's
// betas, Muon's and Schedule-Free's own keys), naming the section, key and value and what is
// allowed; `kforge run` then exits 2 before training.
#include <gtest/gtest.h>

#include <fstream>

#include "kforge/sdk/error.h"
#include "support/component_host.h"
#include "support/test_host.h"
#include "core/train/train_fixture.h"

namespace kforge::test {
namespace {

struct BadValue {
  const char* name;
  const char* optimizer;
  std::string override_;
  std::string head;     ///< "[optimizer] key = value"
  std::string allowed;  ///< what the message says is allowed
};
void PrintTo(const BadValue& c, std::ostream* os) { *os << c.name; }

class OptimizerValue : public ::testing::TestWithParam<BadValue> {};

TEST_P(OptimizerValue, BuildingTheOptimizerRefusesWithKeyValueAndWhatIsAllowed) {
  const BadValue& c = GetParam();
  ComponentHost h(std::string("[optimizer]\nname = \"") + c.optimizer + "\"\n", {c.override_});
  try {
    h.components.optimizer({});
    ADD_FAILURE() << "no sdk::ConfigError for " << c.override_;
  } catch (const sdk::ConfigError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.rfind(c.head + ": " + c.allowed, 0), 0u) << message;
    EXPECT_NE(message.find(std::string("(read by optimizer '") + c.optimizer + "')"), std::string::npos) << message;
  }
}

const BadValue kBadValues[] = {
    {"beta1_one", "adamw", "--optimizer.betas=(1.0, 0.95)", "[optimizer] betas = [1.0, 0.95]",
     "each beta must be in [0, 1)"},
    {"beta2_negative", "lion", "--optimizer.betas=[0.9,-0.5]", "[optimizer] betas = [0.9, -0.5]",
     "each beta must be in [0, 1)"},
    {"betas_count", "adamw", "--optimizer.betas=0.9", "[optimizer] betas = [0.9]", "must be two numbers"},
    {"muon_adam_lr", "muon", "--optimizer.muon_adam_lr=0", "[optimizer] muon_adam_lr = 0.0", "must be > 0"},
    {"muon_momentum_zero", "muon", "--optimizer.muon_momentum=0", "[optimizer] muon_momentum = 0.0",
     "must be in (0, 1)"},
    {"muon_momentum_one", "muon", "--optimizer.muon_momentum=1", "[optimizer] muon_momentum = 1.0",
     "must be in (0, 1)"},
    {"muon_ns_steps", "muon", "--optimizer.muon_ns_steps=0", "[optimizer] muon_ns_steps = 0", "must be > 0"},
    {"schedule_free_warmup", "schedule_free_adamw", "--optimizer.schedule_free_warmup_steps=-1",
     "[optimizer] schedule_free_warmup_steps = -1", "must be >= 0"},
};
INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerValue, ::testing::ValuesIn(kBadValues),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(OptimizerValue, KforgeRunExitsTwoAndTrainsNothing) {
  TrainFixture fx;
  const auto cfg = fx.root / "cfg.toml";
  std::ofstream(cfg) << fx.toml;
  std::string output;
  const int status = run_command("cd '" + fx.root.string() + "' && '" + KFORGE_BIN + "' run '" + cfg.string() +
                                     "' --optimizer.name=muon --optimizer.muon_momentum=1",
                                 &output);
  EXPECT_EQ(status, 2) << output;
  EXPECT_NE(output.find("[optimizer] muon_momentum = 1.0: must be in (0, 1) (read by optimizer 'muon')"),
            std::string::npos)
      << output;
  EXPECT_FALSE(std::filesystem::exists(fx.checkpoint_dir / "latest")) << output;
}

}  // namespace
}  // namespace kforge::test
