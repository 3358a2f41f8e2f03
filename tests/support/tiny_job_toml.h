// The tests' tiny training job as TOML: a 2-layer, dim-32 transformer, batch 4 x 16 tokens, fp32, one thread; and
// the vision-language sections of its VLM runs.
#pragma once

#include <cstdint>
#include <string>

namespace kforge::test {

/// The [model], [train], [optimizer] and [scheduler] sections of the tiny job (the data, eval,
/// checkpoint and metrics sections are the caller's).
std::string tiny_job_toml(int vocab_size, int64_t max_steps);

/// A vision-language run's parts beside the tiny job: the random encoder (4 tokens of 16 features a frame), an MLP
/// adapter and [vlm] max_text_len = 12 (the data section is the caller's).
std::string tiny_vlm_toml();

}  // namespace kforge::test
