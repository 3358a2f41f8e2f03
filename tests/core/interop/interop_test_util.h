// Shared pieces of the interop tests: tiny trained checkpoints, the CLI, and logits from kforge and the HF oracle.
#pragma once

#include <ATen/ATen.h>

#include <filesystem>
#include <string>
#include <vector>

#include "core/train/train_fixture.h"

namespace kforge::test::interop {

/// fp32 logits of the same weights, kforge (fp32) vs the oracle (float64): the fp32 1e-5, relative to the
/// logits' scale, max(1, max |logit|), as in logit_error. fp32 rounds each operation to 2^-24 (6e-8) of its result, so
/// the error of a forward grows with the values it computes: 1e-5 of the largest logit leaves about 170 roundings of
/// it for two blocks of norms, projections, attention and experts. The kernels' summation orders differ by CPU family
/// (OpenBLAS and oneDNN dispatch by ISA), and so does the error: the Mixtral import's logits (up to 4.5) were 4.3e-6
/// off on an AMD CPU and 1.2e-5 on an Intel AVX-512 one, where python3-torch's own fp32 forward is 3.3e-6 off.
constexpr double kLogitTolerance = 1e-5;

/// max |ours - theirs| / max(1, max |theirs|), printed (with `label`) as a measurement; infinite without `theirs`
/// (the oracle failed).
double logit_error(const at::Tensor& ours, const at::Tensor& theirs, const std::string& label);

/// A tiny model trained for 10 steps (fp32) once per test process: dense (with a SentencePiece
/// tokenizer in its config) or MoE (4 experts, top 2, no tokenizer). Returns its step_10 directory.
const std::filesystem::path& trained_dense();
const std::filesystem::path& trained_moe();
/// The fixture that trained the dense model (its plugins, data and config).
const TrainFixture& dense_fixture();

/// `kforge <args>` with stderr merged into the returned output.
std::string kforge_cli(const std::string& args, int* rc);

/// [2, 12] token ids below 64.
at::Tensor test_tokens();

/// The logits kforge computes for `tokens` with the checkpoint in `dir` (step_N or checkpoint.dir).
at::Tensor kforge_logits(const std::filesystem::path& dir, const at::Tensor& tokens);

/// The logits tests/oracles/hf_llama.py computes (float64) from the Hugging Face directory `hf_dir`.
at::Tensor oracle_logits(const std::filesystem::path& hf_dir, const at::Tensor& tokens);

/// The bytes of a file ("" when it cannot be read).
std::string file_bytes(const std::filesystem::path& path);

}  // namespace kforge::test::interop
