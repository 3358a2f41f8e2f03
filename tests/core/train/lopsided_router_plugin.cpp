// Test plugin: router "fixture_lopsided_topk", which sends every token to the first half of the experts (the first
// rank's under ep = 2), so the other ranks' experts receive nothing: the uneven case of expert parallelism.
#include <ATen/ATen.h>
#include <kforge/sdk/plugin.h>
#include <torch/nn/modules/linear.h>

namespace {

using kforge::sdk::reads;

class LopsidedTopK final : public kforge::sdk::Router {
 public:
  explicit LopsidedTopK(const kforge::sdk::RouterSpec& spec) : spec_(spec) {
    gate_ = register_module("gate", torch::nn::Linear(torch::nn::LinearOptions(spec.dim, spec.num_experts).bias(false)));
  }

  kforge::sdk::RouterOutput route(const at::Tensor& x) override {
    const int64_t half = spec_.num_experts / 2;
    const at::Tensor logits = gate_->forward(x).narrow(1, 0, half);
    const at::Tensor probs = at::softmax(logits, -1);
    auto [top, indices] = probs.topk(spec_.top_k, -1);
    const at::Tensor weights = top / top.sum(-1, /*keepdim=*/true);
    const at::Tensor counts =
        at::bincount(indices.reshape(-1), {}, spec_.num_experts).to(at::kFloat);
    return {weights, indices, (probs.mean(0) * probs.mean(0)).sum(), at::zeros({}, x.options()), counts};
  }

 private:
  kforge::sdk::RouterSpec spec_;
  torch::nn::Linear gate_{nullptr};
};

constexpr kforge_config_key kCoreKeys[] = {reads("num_experts"), reads("moe_top_k")};
constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::router, "fixture_lopsided_topk", "0.1.0",
                     "softmax top-k over the first half of the experts only", kforge::sdk::config_keys(kCoreKeys)),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_router("fixture_lopsided_topk", [](const kforge::sdk::BuildContext&, const kforge::sdk::RouterSpec& spec) {
    return std::make_shared<LopsidedTopK>(spec);
  });
}

}  // namespace

KFORGE_PLUGIN("fixture-lopsided-router", "0.1.0", "expert-parallel test fixture: a router that uses half the experts",
              kComponents, register_all)
