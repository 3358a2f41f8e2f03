// generate(): prefill, then one-token decode steps with the model's cache.
#include "generate/generate.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <fmt/format.h>

#include "dist/device.h"
#include "kforge/sdk/error.h"

namespace kforge::generate {
namespace {

/// Puts the model in eval mode for its lifetime, then restores the previous mode.
class EvalModeGuard {
 public:
  explicit EvalModeGuard(sdk::Model& model) : model_(model), was_training_(model.is_training()) { model_.eval(); }
  ~EvalModeGuard() { model_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  sdk::Model& model_;
  bool was_training_;
};

int64_t check_prompts(const std::vector<std::vector<int64_t>>& prompts) {
  if (prompts.empty()) throw sdk::Error("generate: no prompts given");
  const size_t length = prompts.front().size();
  if (length == 0) throw sdk::Error("generate: prompts must hold at least one token");
  for (size_t i = 1; i < prompts.size(); ++i) {
    if (prompts[i].size() != length) {
      throw sdk::Error(fmt::format("generate: prompts of one batch must have equal lengths (no padding); prompt 0 "
                                   "has {} tokens, prompt {} has {}",
                                   length, i, prompts[i].size()));
    }
  }
  return static_cast<int64_t>(length);
}

}  // namespace

std::vector<std::vector<int64_t>> generate(sdk::Model& model, const std::vector<std::vector<int64_t>>& prompts,
                                           const GenerateOptions& options) {
  const int64_t prompt_len = check_prompts(prompts);
  const SamplingOptions sampling{options.temperature, options.top_k, options.top_p};
  check(sampling);
  if (options.max_new_tokens < 0) {
    throw sdk::Error(fmt::format("generate: max_new_tokens must be >= 0, got {}", options.max_new_tokens));
  }
  const int64_t total = prompt_len + options.max_new_tokens;
  const int64_t limit = model.max_seq_len();
  if (limit > 0 && total > limit) {
    throw sdk::ConfigError(fmt::format("generate: prompt length {} + max_new_tokens {} = {} exceeds the model's "
                                       "max_seq_len = {}",
                                       prompt_len, options.max_new_tokens, total, limit));
  }
  std::vector<std::vector<int64_t>> out = prompts;
  if (options.max_new_tokens == 0) return out;

  at::NoGradGuard no_grad;
  EvalModeGuard eval_mode(model);
  const at::Device device = dist::parameter_device(model);
  const auto batch = static_cast<int64_t>(prompts.size());
  at::Tensor tokens = at::empty({batch, prompt_len}, at::kLong);
  for (int64_t b = 0; b < batch; ++b) {
    std::copy(prompts[b].begin(), prompts[b].end(), tokens[b].data_ptr<int64_t>());
  }
  at::Generator generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
  const auto state = model.start_decoding(batch, total);
  at::Tensor logits = model.decode(tokens.to(device), *state).select(1, -1);
  at::Tensor finished = at::zeros({batch}, at::kBool);
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    const bool limit = options.vocab_limit > 0 && options.vocab_limit < logits.size(-1);
    const at::Tensor next = sample(limit ? logits.narrow(-1, 0, options.vocab_limit) : logits, sampling,
                                   generator);  // (B) int64, CPU
    const int64_t* ids = next.data_ptr<int64_t>();
    for (int64_t b = 0; b < batch; ++b) out[b].push_back(ids[b]);
    if (options.eos_id >= 0) {
      finished |= next.eq(options.eos_id);
      if (finished.all().item<bool>()) break;
    }
    if (step + 1 < options.max_new_tokens) logits = model.decode(next.view({batch, 1}).to(device), *state).select(1, -1);
  }
  return out;
}

}  // namespace kforge::generate
