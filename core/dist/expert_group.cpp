// ExpertGroup: the differentiable all-to-all, share and unite over Group's collectives.
#include "dist/expert_group.h"

#include <ATen/ATen.h>
#include <torch/autograd.h>

#include "dist/group_link.h"

namespace kforge::dist {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Every rank's share (this rank's given) -> the n rows in rank order: one all-gather of shares padded to the
// largest share.
at::Tensor gather_shares(const Group& group, const at::Tensor& share, int64_t n) {
  const int size = group.size();
  const int64_t most = (n + size - 1) / size;
  std::vector<int64_t> shape = share.sizes().vec();
  shape[0] = most;
  at::Tensor padded = at::zeros(shape, share.options());
  padded.narrow(0, 0, share.size(0)).copy_(share);
  shape.insert(shape.begin(), size);
  at::Tensor all = at::empty(shape, share.options());
  group.all_gather_into(all, padded);
  std::vector<at::Tensor> pieces;
  for (int r = 0; r < size; ++r) {
    const auto [begin, end] = share_rows(n, r, size);
    pieces.push_back(all[r].narrow(0, 0, end - begin));
  }
  return at::cat(pieces);
}

struct AllToAll : torch::autograd::Function<AllToAll> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const Group* group, double* seconds,
                            const std::vector<int64_t>& send, const std::vector<int64_t>& recv) {
    GroupLink{group, seconds}.save(ctx);
    ctx->saved_data["send"] = send;
    ctx->saved_data["recv"] = recv;
    return timed(*seconds, [&] { return group->all_to_all(x, send, recv); });
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const GroupLink l = GroupLink::of(ctx);
    const std::vector<int64_t> send = ctx->saved_data["send"].toIntVector();
    const std::vector<int64_t> recv = ctx->saved_data["recv"].toIntVector();
    at::Tensor back = timed(*l.seconds, [&] { return l.group->all_to_all(grads[0], recv, send); });
    return {back, at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

struct Share : torch::autograd::Function<Share> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& x, const Group* group, double* seconds) {
    GroupLink{group, seconds}.save(ctx);
    ctx->saved_data["n"] = x.size(0);
    const auto [begin, end] = share_rows(x.size(0), group->rank(), group->size());
    return x.narrow(0, begin, end - begin).clone();
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const GroupLink l = GroupLink::of(ctx);
    const int64_t n = ctx->saved_data["n"].toInt();
    at::Tensor whole = timed(*l.seconds, [&] { return gather_shares(*l.group, grads[0].contiguous(), n); });
    return {whole, at::Tensor(), at::Tensor()};
  }
};

struct Unite : torch::autograd::Function<Unite> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& share, const Group* group, double* seconds,
                            int64_t n) {
    GroupLink{group, seconds}.save(ctx);
    ctx->saved_data["n"] = n;
    return timed(*seconds, [&] { return gather_shares(*group, share.contiguous(), n); });
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const GroupLink l = GroupLink::of(ctx);
    const auto [begin, end] = share_rows(ctx->saved_data["n"].toInt(), l.group->rank(), l.group->size());
    return {grads[0].narrow(0, begin, end - begin).clone(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

std::pair<int64_t, int64_t> share_rows(int64_t n, int rank, int size) {
  return {n * rank / size, n * (rank + 1) / size};
}

std::vector<int64_t> ExpertGroup::exchange_counts(const std::vector<int64_t>& send) const {
  const std::vector<int64_t> ones(static_cast<size_t>(group_.size()), 1);
  const at::Tensor recv = timed(seconds_, [&] { return group_.all_to_all(at::tensor(send, at::kLong), ones, ones); });
  return {recv.data_ptr<int64_t>(), recv.data_ptr<int64_t>() + recv.numel()};
}

at::Tensor ExpertGroup::all_to_all(const at::Tensor& x, const std::vector<int64_t>& send,
                                   const std::vector<int64_t>& recv) const {
  return AllToAll::apply(x, &group_, &seconds_, send, recv);
}

at::Tensor ExpertGroup::share(const at::Tensor& x) const { return Share::apply(x, &group_, &seconds_); }

at::Tensor ExpertGroup::unite(const at::Tensor& share, int64_t n) const {
  return Unite::apply(share, &group_, &seconds_, n);
}

double ExpertGroup::take_seconds() const { return take(seconds_); }

}  // namespace kforge::dist
