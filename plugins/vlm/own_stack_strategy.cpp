// OwnStackStrategy: the forward over the image tokens and the refusal of cached decoding.
#include "own_stack_strategy.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

#include <utility>

namespace kforge::vlm {

int64_t tokens_per_image(const sdk::VisionLanguageParts& parts, const std::string& arch) {
  if (!parts.encoder || !parts.adapter) throw sdk::Error(arch + ": a vision encoder and an adapter are both required");
  return parts.adapter->output_num_tokens(parts.encoder->num_tokens());
}

OwnStackStrategy::OwnStackStrategy(sdk::VisionLanguageParts parts, std::string arch, std::string training_only,
                                   TextWarmStart warm_start)
    : TextComposition(std::move(parts), std::move(arch)),
      visual_tokens_(adapter_->output_num_tokens(encoder_->num_tokens())),
      training_only_(std::move(training_only)),
      warm_start_(std::move(warm_start)) {}

std::map<std::string, at::Tensor> OwnStackStrategy::from_text_state(
    const std::map<std::string, at::Tensor>& state) const {
  std::map<std::string, at::Tensor> out;
  if (warm_start_.path.empty()) return out;
  for (const auto& item : text_->named_parameters(/*recurse=*/true)) {
    const std::string dense = warm_start_.dense_name(item.key());
    auto it = state.find("transformer." + dense);
    if (it == state.end()) it = state.find(dense);
    if (it == state.end()) {
      throw sdk::Error("[vlm] " + warm_start_.key + " = \"" + warm_start_.path + "\": the text checkpoint has no '" +
                       dense + "' (nor 'transformer." + dense + "') for this model's 'transformer." + item.key() +
                       "'; warm-start from a dense text (or joint_decoder) run with the same [model] shape");
    }
    out.emplace("transformer." + item.key(), it->second);
  }
  return out;
}

at::Tensor OwnStackStrategy::forward(const at::Tensor& tokens) {
  const VisualTokens visual = image_tokens(tokens);
  return text_->forward_prefixed(visual.tokens, tokens, visual.padding);
}

sdk::Error OwnStackStrategy::training_only_error() const {
  return sdk::Error("[vlm] arch = \"" + arch_ + "\" is training-only: " + training_only_ +
                    " (kforge generate supports joint_decoder and cross_attention)");
}

std::unique_ptr<sdk::Model::DecodeState> OwnStackStrategy::start_decoding(int64_t batch, int64_t max_len) {
  (void)batch;
  (void)max_len;
  throw training_only_error();
}

at::Tensor OwnStackStrategy::decode(const at::Tensor& tokens, DecodeState& state) {
  (void)tokens;
  (void)state;
  throw training_only_error();
}

}  // namespace kforge::vlm
