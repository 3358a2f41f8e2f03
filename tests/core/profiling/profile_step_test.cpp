// A profiled training step of the built-in transformer: the trace holds the three step phases,
// with the model's matmuls inside forward and backward and the optimizer's ops inside optimizer.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "profiling/trace_recorder.h"
#include "profiling/user_scope.h"
#include "support/component_host.h"

namespace kforge::test {
namespace {

constexpr const char* kToml = R"(
[model]
dim = 32
n_layers = 2
n_heads = 4
n_kv_heads = 2
vocab_size = 64
max_seq_len = 16
[optimizer]
name = "adamw"
lr = 1e-3
)";

bool is_matmul(const std::string& name) {
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::matmul" || name == "aten::bmm" ||
         name == "kforge::onednn_linear" || name == "kforge::onednn_linear_backward";
}

TEST(ProfiledStep, PhasesContainTheirOps) {
  ComponentHost h(kToml);
  auto model = h.components.model();
  std::vector<sdk::NamedParameter> params;
  for (const auto& item : model->named_parameters(true)) params.push_back({item.key(), item.value()});
  auto optimizer = h.components.optimizer(params);
  auto loss_fn = h.components.loss();
  const at::Tensor tokens = at::randint(0, 64, {2, 16}, at::kLong);

  profiling::TraceRecorder recorder;
  recorder.start();
  at::Tensor loss;
  {
    profiling::UserScope scope("forward");
    loss = loss_fn->compute(model->forward(tokens), tokens);
  }
  {
    profiling::UserScope scope("backward");
    loss.backward();
  }
  {
    profiling::UserScope scope("optimizer");
    optimizer->step();
  }
  recorder.stop();

  std::map<std::string, profiling::TraceEvent> phases;
  for (const auto& e : recorder.events()) {
    if (e.user_scope) phases[e.name] = e;
  }
  ASSERT_EQ(phases.size(), 3u) << "forward, backward, optimizer";
  std::map<std::string, int> matmuls;
  for (const auto& e : recorder.events()) {
    EXPECT_LE(e.begin_ns, e.end_ns) << e.name;
    if (e.user_scope || !is_matmul(e.name)) continue;
    for (const auto& [name, phase] : phases) {
      if (e.begin_ns >= phase.begin_ns && e.end_ns <= phase.end_ns) ++matmuls[name];
    }
  }
  EXPECT_GT(matmuls["forward"], 0);
  EXPECT_GT(matmuls["backward"], 0);
  EXPECT_EQ(matmuls["optimizer"], 0) << "AdamW does no matrix products";
  EXPECT_LT(phases["forward"].end_ns, phases["backward"].begin_ns + 1);
  EXPECT_LT(phases["backward"].end_ns, phases["optimizer"].begin_ns + 1);
}

}  // namespace
}  // namespace kforge::test
