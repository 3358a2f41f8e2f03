// Tensor-parallel slicing (see tensor_split.h).
#include "tensor_split.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::builtin::models {

sdk::TensorShard keep_slice(const at::Tensor& weight, const std::string& name, int64_t dim,
                            const sdk::TensorParallel& tp, const std::string& what) {
  const int64_t whole = weight.size(dim);
  if (whole % tp.size() != 0) {
    throw sdk::ConfigError(what + " (" + std::to_string(whole) + ") must be divisible by [distributed] tp (" +
                           std::to_string(tp.size()) + ")");
  }
  const int64_t count = whole / tp.size();
  sdk::TensorShard shard{name, weight.sizes().vec(), std::vector<int64_t>(static_cast<size_t>(weight.dim()), 0)};
  shard.offsets[static_cast<size_t>(dim)] = count * tp.rank();
  const at::NoGradGuard no_grad;
  weight.set_data(weight.narrow(dim, count * tp.rank(), count).clone(at::MemoryFormat::Contiguous));
  return shard;
}

}  // namespace kforge::builtin::models
