// The tests' tiny training job as TOML (see tiny_job_toml.h).
#include "support/tiny_job_toml.h"

#include <fmt/format.h>

namespace kforge::test {

std::string tiny_job_toml(int vocab_size, int64_t max_steps) {
  return fmt::format(R"([model]
dim = 32
n_layers = 2
n_heads = 4
n_kv_heads = 2
vocab_size = {}
max_seq_len = 32

[train]
batch_size = 4
seq_len = 16
max_steps = {}
seed = 1234
mixed_precision = "fp32"
num_threads = 1

[optimizer]
lr = 1e-2

[scheduler]
name = "cosine"
warmup_steps = 4
)",
                     vocab_size, max_steps);
}

std::string tiny_vlm_toml() {
  return R"(
[vision_encoder]
type = "random"
num_tokens = 4
feature_dim = 16

[adapter]
type = "mlp_2layer"

[vlm]
max_text_len = 12
)";
}

}  // namespace kforge::test
