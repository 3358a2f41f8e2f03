// The tests' tiny training job as TOML: a 2-layer, dim-32 transformer, batch 4 x 16 tokens, fp32, one thread.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::test {

/// The [model], [train], [optimizer] and [scheduler] sections of the tiny job (the data, eval,
/// checkpoint and metrics sections are the caller's).
std::string tiny_job_toml(int vocab_size, int64_t max_steps);

}  // namespace kforge::test
