// Loss test helpers (see loss_fixture.h).
#include "plugins/losses/loss_fixture.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include "kforge/sdk/loss.h"

namespace kforge::test {

ValueAndGrad value_and_grad(sdk::Loss& loss, const at::Tensor& logits, const at::Tensor& labels) {
  at::Tensor leaf = logits.detach().clone().set_requires_grad(true);
  at::Tensor value = loss.compute(leaf, labels);
  value.backward();
  return {value.detach(), leaf.grad()};
}

at::Tensor seeded_logits(uint64_t seed, int64_t batch, int64_t seq, int64_t vocab, at::ScalarType dtype, double scale) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  return (at::normal(0.0, 1.0, {batch, seq, vocab}, gen, at::TensorOptions().dtype(at::kDouble)) * scale).to(dtype);
}

at::Tensor seeded_labels(uint64_t seed, int64_t batch, int64_t seq, int64_t vocab, double ignored_fraction) {
  at::Generator gen = at::detail::createCPUGenerator(seed);
  at::Tensor labels = at::randint(vocab, {batch, seq}, gen, at::TensorOptions().dtype(at::kLong));
  const at::Tensor ignore = at::rand({batch, seq}, gen, at::TensorOptions().dtype(at::kDouble)) < ignored_fraction;
  return labels.masked_fill(ignore, sdk::kIgnoreIndex);
}

}  // namespace kforge::test
