// TensorGroup: the differentiable enter (backward: sum) and sum (backward: identity) over Group's all-reduce.
#include "dist/tensor_group.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <torch/autograd.h>

#include "dist/group_link.h"
#include "kforge/sdk/error.h"

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

using AlongDimFn = at::Tensor (*)(const Group&, const at::Tensor&, int64_t);

// Gather (forward all-gather, backward reduce-scatter) and Scatter (the reverse) along a dimension.
template <AlongDimFn Forward, AlongDimFn Backward>
struct AlongDim : torch::autograd::Function<AlongDim<Forward, Backward>> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const Group* group, double* seconds,
                            int64_t dim) {
    GroupLink{group, seconds}.save(ctx);
    ctx->saved_data["dim"] = dim;
    return timed(*seconds, [&] { return Forward(*group, x, dim); });
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const GroupLink l = GroupLink::of(ctx);
    const int64_t dim = ctx->saved_data["dim"].toInt();
    return {timed(*l.seconds, [&] { return Backward(*l.group, grads[0], dim); }), at::Tensor(), at::Tensor(),
            at::Tensor()};
  }
};
using Gather = AlongDim<gathered_over, scattered_over>;
using Scatter = AlongDim<scattered_over, gathered_over>;

}  // namespace

at::Tensor gathered_over(const Group& group, const at::Tensor& x, int64_t dim) {
  const at::Tensor moved = x.transpose(0, dim).contiguous();
  std::vector<int64_t> shape = moved.sizes().vec();
  shape.insert(shape.begin(), group.size());
  at::Tensor all = at::empty(shape, moved.options());
  group.all_gather_into(all, moved);
  shape.erase(shape.begin());
  shape[0] *= group.size();
  return all.view(shape).transpose(0, dim).contiguous();
}

at::Tensor scattered_over(const Group& group, const at::Tensor& x, int64_t dim) {
  if (x.size(dim) % group.size() != 0) {
    throw sdk::Error(fmt::format("tensor parallelism: dimension {} of shape {} does not split into {} equal parts", dim,
                                 c10::str(x.sizes()), group.size()));
  }
  const bool narrow = x.scalar_type() == at::kBFloat16 && !x.is_cuda();
  const at::Tensor moved = (narrow ? x.to(at::kFloat) : x).transpose(0, dim).contiguous();
  const at::Tensor part = group.reduce_scatter(moved).transpose(0, dim).contiguous();
  return narrow ? part.to(at::kBFloat16) : part;
}

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

at::Tensor TensorGroup::gather(const at::Tensor& x, int64_t dim) const {
  return Gather::apply(x, &group_, &seconds_, dim);
}

at::Tensor TensorGroup::scatter(const at::Tensor& x, int64_t dim) const {
  return Scatter::apply(x, &group_, &seconds_, dim);
}

double TensorGroup::take_seconds() const { return take(seconds_); }

}  // namespace kforge::dist
