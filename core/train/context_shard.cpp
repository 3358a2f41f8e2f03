// context_shard and context_mean (see context_shard.h).
#include "train/context_shard.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "kforge/sdk/context_parallel.h"
#include "kforge/sdk/error.h"

namespace kforge::train {

data::Batch context_shard(data::Batch batch, int rank, int size) {
  if (batch.pixel_values.defined()) {
    throw sdk::Error("context parallelism ([distributed] cp > 1) splits token sequences; a batch with images reached it");
  }
  const int64_t seq = batch.input_ids.size(1);
  if (seq % (2 * size) != 0) {
    throw sdk::Error(fmt::format("context parallelism: a sequence of {} positions does not split into 2 x cp = {} "
                                 "equal chunks; make [train] seq_len a multiple of {}",
                                 seq, 2 * size, 2 * size));
  }
  const at::Tensor mine = sdk::context_positions(rank, size, seq).to(batch.input_ids.device());
  batch.input_ids = batch.input_ids.index_select(1, mine);
  batch.labels = batch.labels.index_select(1, mine);
  if (batch.doc_ids.defined()) batch.doc_ids = batch.doc_ids.index_select(1, mine);
  return batch;
}

double context_mean(const dist::Group& cp, double loss, int64_t tokens) {
  if (cp.size() == 1) return loss;
  at::Tensor t = at::tensor({tokens > 0 ? loss * static_cast<double>(tokens) : 0.0, static_cast<double>(tokens)},
                            at::kDouble);
  cp.all_reduce(t);
  return t[1].item<double>() > 0 ? t[0].item<double>() / t[1].item<double>() : loss;
}

}  // namespace kforge::train
