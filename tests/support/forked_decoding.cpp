// forked_decoding_error: prefill, fork, per-copy decoding and the untouched original, each against forward().
#include "support/forked_decoding.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

#include "support/max_abs_diff.h"

namespace kforge::test {

double forked_decoding_error(sdk::Model& model, int64_t vocab) {
  at::NoGradGuard no_grad;
  const at::Tensor contexts = at::randint(0, vocab, {2, 6}, at::kLong);
  const at::Tensor rows = at::randint(0, vocab, {4, 4}, at::kLong);
  auto state = model.start_decoding(2, 10);
  const at::Tensor head = model.decode(contexts, *state);
  auto copies = model.fork_decoding(*state, 2);
  const at::Tensor tail =
      at::cat({model.decode(rows.narrow(1, 0, 3), *copies), model.decode(rows.narrow(1, 3, 1), *copies)}, 1);
  const at::Tensor first_copies = at::tensor(std::vector<int64_t>{0, 2}, at::kLong);  // copy 0 of each context
  const at::Tensor original = model.decode(rows.index_select(0, first_copies), *state);
  const at::Tensor full = model.forward(at::cat({contexts.repeat_interleave(2, 0), rows}, 1));
  const at::Tensor full_firsts = full.index_select(0, first_copies);
  return std::max({max_abs_diff(head, full_firsts.narrow(1, 0, 6)), max_abs_diff(tail, full.narrow(1, 6, 4)),
                   max_abs_diff(original, full_firsts.narrow(1, 6, 4))});
}

}  // namespace kforge::test
