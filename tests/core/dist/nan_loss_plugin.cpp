// Test plugin: token cross-entropy whose value (not its gradient) is NaN on one rank at one step.
// The gradient stays finite, so only the trainer's per-step agreement can make the other ranks
// skip that step too. The rank is the launcher's RANK; the step is the n-th compute() call (a run
// without eval and with grad_accum_steps = 1 calls compute() once per step).
#include <ATen/ATen.h>

#include <cstdlib>
#include <limits>

#include <kforge/sdk/plugin.h>

namespace {

class NanOnRankLoss final : public kforge::sdk::Loss {
 public:
  NanOnRankLoss(int64_t rank, int64_t step) : nan_(rank_from_env() == rank ? step : -1) {}

  at::Tensor compute(const at::Tensor& logits, const at::Tensor& labels) override {
    const at::Tensor flat = logits.reshape({-1, logits.size(-1)}).to(at::kFloat);
    const at::Tensor loss =
        at::cross_entropy_loss(flat, labels.reshape({-1}), {}, at::Reduction::Mean, kforge::sdk::kIgnoreIndex);
    if (++calls_ != nan_) return loss;
    return loss + std::numeric_limits<double>::quiet_NaN();  // a constant: the gradient stays finite
  }

 private:
  static int64_t rank_from_env() {
    const char* v = std::getenv("RANK");
    return v != nullptr ? std::atoll(v) : 0;
  }
  int64_t nan_;
  int64_t calls_ = 0;
};

constexpr kforge_config_key kKeys[] = {
    {"fixture_nan_rank", "int", "-1", "rank whose loss is NaN (-1: none)"},
    {"fixture_nan_step", "int", "0", "step (1-based compute() call) at which it is NaN"},
};
constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::loss, "fixture_nan_on_rank", "0.1.0",
                               "cross-entropy with a NaN value on one rank at one step", kKeys),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_loss("fixture_nan_on_rank", [](const kforge::sdk::BuildContext& ctx) {
    return std::make_unique<NanOnRankLoss>(ctx.section.get_int("fixture_nan_rank"),
                                           ctx.section.get_int("fixture_nan_step"));
  });
}

}  // namespace

KFORGE_PLUGIN("fixture-nan-loss", "0.1.0", "distributed test fixture: a per-rank NaN loss", kComponents, register_all)
