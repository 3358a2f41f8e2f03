// TensorGroup: the differentiable enter (backward: sum) and sum (backward: identity) over Group's all-reduce.
#include "dist/tensor_group.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include "dist/group_link.h"

namespace kforge::dist {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

struct Enter : torch::autograd::Function<Enter> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const Group* group, double* seconds) {
    GroupLink{group, seconds}.save(ctx);
    return x.view_as(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const GroupLink l = GroupLink::of(ctx);
    return {timed(*l.seconds, [&] { return reduced_over(*l.group, grads[0]); }), at::Tensor(), at::Tensor()};
  }
};

struct Sum : torch::autograd::Function<Sum> {
  static at::Tensor forward(AutogradContext*, const at::Tensor& x, const Group* group, double* seconds) {
    return timed(*seconds, [&] { return reduced_over(*group, x); });
  }
  static variable_list backward(AutogradContext*, variable_list grads) {
    return {grads[0], at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor reduced_over(const Group& group, const at::Tensor& x, Reduce op) {
  const bool narrow = x.scalar_type() == at::kBFloat16 && !x.is_cuda();
  at::Tensor out = narrow ? x.to(at::kFloat) : x.contiguous().clone();
  group.all_reduce(out, op);
  return narrow ? out.to(at::kBFloat16) : out;
}

at::Tensor TensorGroup::enter(const at::Tensor& x) const { return Enter::apply(x, &group_, &seconds_); }

at::Tensor TensorGroup::sum(const at::Tensor& x) const { return Sum::apply(x, &group_, &seconds_); }

at::Tensor TensorGroup::max(const at::Tensor& x) const {
  const at::NoGradGuard no_grad;
  return timed(seconds_, [&] { return reduced_over(group_, x.detach(), Reduce::Max); });
}

double TensorGroup::take_seconds() const {
  const double s = seconds_;
  seconds_ = 0;
  return s;
}

}  // namespace kforge::dist
