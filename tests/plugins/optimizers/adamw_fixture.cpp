// Model-like named parameters and gradient sequences (see adamw_fixture.h).
#include "plugins/optimizers/adamw_fixture.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <iomanip>
#include <sstream>

namespace kforge::test {
namespace {

const std::vector<std::vector<int64_t>>& shapes() {
  static const std::vector<std::vector<int64_t>> s = {{11, 4}, {4, 4}, {4}, {6, 4}, {6}, {2, 3}, {3, 4}, {11, 4}, {4, 4}};
  return s;
}

at::Tensor seeded_normal(uint64_t seed, at::IntArrayRef shape, at::ScalarType dtype) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return at::normal(0.0, 1.0, shape, gen, at::TensorOptions().dtype(at::kDouble)).to(dtype);
}

}  // namespace

const std::vector<std::string>& AdamWFixture::names() {
  static const std::vector<std::string> n = {
      "tok_embeddings.weight",          "layers.0.attention.wq.weight", "layers.0.attention_norm.weight",
      "layers.0.feed_forward.w1.weight", "layers.0.feed_forward.w1.bias", "layers.0.proj.bias",
      "layers.0.unused.weight",          "output.weight",                "frozen.weight"};
  return n;
}

std::vector<sdk::NamedParameter> AdamWFixture::params(at::ScalarType dtype) {
  std::vector<sdk::NamedParameter> out;
  for (size_t i = 0; i < names().size(); ++i) {
    at::Tensor t = seeded_normal(1000 + i, shapes()[i], dtype);
    t.set_requires_grad(static_cast<int>(i) != kFrozen);
    out.push_back({names()[i], t});
  }
  return out;
}

std::vector<sdk::NamedParameter> AdamWFixture::copy(const std::vector<sdk::NamedParameter>& params) {
  std::vector<sdk::NamedParameter> out;
  for (const auto& p : params) {
    at::Tensor t = p.tensor.detach().clone();
    t.set_requires_grad(p.tensor.requires_grad());
    out.push_back({p.name, t});
  }
  return out;
}

bool AdamWFixture::has_grad(int64_t step, int index) {
  if (index == kUnused || index == kFrozen) return false;
  if (index == 2 && step == 0) return false;  // the norm weight starts one step late
  if (index == 3 && step == 2) return false;  // w1.weight skips a step midway
  return true;
}

at::Tensor AdamWFixture::grad(int64_t step, int index, const at::Tensor& like) {
  if (!has_grad(step, index)) return at::Tensor();
  // Different scales per parameter so exp_avg_sq and eps both matter.
  const double scale = index % 3 == 0 ? 1e-3 : index % 3 == 1 ? 1.0 : 30.0;
  return seeded_normal(50000 + 100 * step + index, like.sizes(), like.scalar_type()) * scale;
}

double AdamWFixture::lr_factor(int64_t step) {
  static const double factors[kSteps] = {0.0, 0.5, 1.0, 1.0, 0.25, 0.25};
  return factors[step];
}

void AdamWFixture::run(sdk::Optimizer& opt, const std::vector<sdk::NamedParameter>& params, int64_t first,
                       int64_t last) {
  for (int64_t step = first; step < last; ++step) {
    opt.set_lr_factor(lr_factor(step));
    for (size_t i = 0; i < params.size(); ++i) {
      params[i].tensor.mutable_grad() = grad(step, static_cast<int>(i), params[i].tensor);
    }
    opt.step();
  }
}

std::string AdamWFixture::toml(double lr, double weight_decay, bool decay_embeddings) {
  std::ostringstream out;
  out << std::setprecision(17) << "[optimizer]\nname = \"adamw\"\nlr = " << lr << "\nweight_decay = " << weight_decay
      << "\nbetas = [0.9, 0.95]\neps = 1e-8\ndecay_embeddings = " << (decay_embeddings ? "true" : "false") << "\n";
  return out.str();
}

}  // namespace kforge::test
