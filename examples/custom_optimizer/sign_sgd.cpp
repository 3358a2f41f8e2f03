// sign_sgd: signSGD with optional momentum (Bernstein et al., 2018), as a kforge optimizer plugin.
//   m = momentum * m + g;  p -= lr * sign(m)        (momentum = 0: p -= lr * sign(g))
#include <ATen/ATen.h>
#include <kforge/sdk/sdk.h>

namespace {

using kforge::sdk::NamedParameter;
using kforge::sdk::StateDict;

class SignSgd final : public kforge::sdk::Optimizer {
 public:
  SignSgd(std::vector<NamedParameter> params, double lr, double momentum)
      : params_(std::move(params)), base_lr_(lr), lr_(lr), momentum_(momentum) {}

  void step() override {
    at::NoGradGuard no_grad;
    for (NamedParameter& p : params_) {
      const at::Tensor& grad = p.tensor.grad();
      if (!grad.defined()) continue;
      at::Tensor direction = grad;
      if (momentum_ != 0.0) {
        auto [it, fresh] = buffers_.try_emplace(p.name);
        if (fresh) it->second = at::zeros_like(p.tensor);
        it->second.mul_(momentum_).add_(grad);
        direction = it->second;
      }
      p.tensor.sub_(direction.sign(), lr_);
    }
  }
  void set_lr_factor(double factor) override { lr_ = base_lr_ * factor; }
  double lr() const override { return lr_; }

  StateDict state_dict() const override {
    StateDict state;
    for (const auto& [name, buffer] : buffers_) state[name + ".momentum_buffer"] = buffer.clone();
    return state;
  }
  void load_state_dict(const StateDict& state) override {
    buffers_.clear();
    for (const NamedParameter& p : params_) {
      auto it = state.find(p.name + ".momentum_buffer");
      if (it == state.end()) continue;  // no buffer yet: the parameter never had a gradient
      if (!it->second.sizes().equals(p.tensor.sizes())) {
        throw kforge::sdk::Error("sign_sgd: state entry '" + it->first + "' has the wrong shape");
      }
      buffers_[p.name] = it->second.to(p.tensor.options()).clone();
    }
  }

 private:
  std::vector<NamedParameter> params_;
  std::map<std::string, at::Tensor> buffers_;  // keyed by parameter name
  double base_lr_, lr_, momentum_;
};

// The core [optimizer] key it reads, then its own (`kforge list-plugins -v` lists both).
constexpr kforge_config_key kKeys[] = {
    kforge::sdk::reads("lr"),
    {"sign_sgd_momentum", "float", "0.0", "momentum of the buffer whose sign is applied (0: plain signSGD)"},
};
constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::optimizer, "sign_sgd", "1.0.0",
                               "p -= lr * sign(momentum buffer of g)", kKeys),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_optimizer("sign_sgd", [](const kforge::sdk::BuildContext& ctx, std::vector<NamedParameter> params) {
    const double momentum = ctx.section.get_float("sign_sgd_momentum");
    if (momentum < 0.0 || momentum >= 1.0) {
      throw kforge::sdk::ConfigError("[optimizer] sign_sgd_momentum must be in [0, 1), got " +
                                     std::to_string(momentum));
    }
    std::vector<NamedParameter> trainable;
    for (NamedParameter& p : params) {
      if (p.tensor.requires_grad()) trainable.push_back(std::move(p));
    }
    return std::make_unique<SignSgd>(std::move(trainable), ctx.section.get_float("lr"), momentum);
  });
}

}  // namespace

KFORGE_PLUGIN("custom-optimizer", "1.0.0", "example out-of-tree plugin: signSGD", kComponents, register_all)
