// OwnStackStrategy: a modality strategy whose "transformer" is a stack it built for itself (an OwnStack: mot, moma),
// run over the adapter's image tokens and the text; training only.
#pragma once

#include <kforge/sdk/error.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "own_stack.h"
#include "text_composition.h"

namespace kforge::vlm {

/// A warm start of the stack from a dense text model's checkpoint: its step directory, and the dense parameter each
/// stack parameter takes its value from (names under the stack: "layers.0.mlp.text.up_proj.weight" ->
/// "layers.0.mlp.up_proj.weight").
struct TextWarmStart {
  std::string path;  ///< "" for none
  std::string key;   ///< the [vlm] key of the path, for errors
  std::function<std::string(const std::string&)> dense_name;
};

/// pixels -> vision_encoder -> adapter -> image tokens; parts.text, the strategy's own stack, runs over them and the
/// text (forward_prefixed) and gives the text positions' logits. Its limits, FLOPs and blocks are the stack's.
class OwnStackStrategy final : public TextComposition {
 public:
  /// parts.text is the stack (an OwnStack built for tokens_per_image(parts) image tokens). `arch` names the strategy in
  /// errors; `training_only` says why it has no cached decoding.
  OwnStackStrategy(sdk::VisionLanguageParts parts, std::string arch, std::string training_only,
                   TextWarmStart warm_start = {});

  at::Tensor forward(const at::Tensor& tokens) override;
  int64_t visual_tokens() const override { return visual_tokens_; }
  /// The stack's, which counts its image positions.
  double flops_per_token(int64_t seq_len) const override { return text_->flops_per_token(seq_len); }
  /// The stack's parameters plus the encoder's and the adapter's.
  int64_t num_params_estimate() const override { return text_->num_params_estimate() + vision_parameters(); }
  /// The stack's: [model] max_seq_len less the image tokens.
  int64_t max_seq_len() const override { return text_->max_seq_len(); }
  /// Refused (sdk::Error): the strategy is training-only.
  std::unique_ptr<DecodeState> start_decoding(int64_t batch, int64_t max_len) override;
  /// Refused as start_decoding.
  at::Tensor decode(const at::Tensor& tokens, DecodeState& state) override;
  /// The warm start's path ("" without one).
  std::string text_warm_start_path() const override { return warm_start_.path; }
  /// Each stack parameter from its dense name in `state` (or "transformer." + it); sdk::Error naming the warm start's
  /// key and the tensor missing.
  std::map<std::string, at::Tensor> from_text_state(const std::map<std::string, at::Tensor>& state) const override;

 private:
  /// The refusal of cached decoding.
  sdk::Error training_only_error() const;

  int64_t visual_tokens_;
  std::string training_only_;
  TextWarmStart warm_start_;
};

/// The image tokens the adapter makes of one image or frame (sdk::Error naming `arch` when the encoder or the adapter
/// is missing): a stack is built for parts.frames times as many.
int64_t tokens_per_image(const sdk::VisionLanguageParts& parts, const std::string& arch);

/// What a strategy's factory does with the parts: builds Stack (an OwnStack, constructed from the [model] settings, the
/// image tokens of a row (parts.frames times tokens_per_image) and `settings`) from parts.text_config as stack_config
/// reads it (`moe_refusal`: why num_experts > 0 is refused), puts it in place of the text model (released), and
/// composes them, with `warm_start`.
template <typename Stack, typename Settings>
std::shared_ptr<sdk::VisionLanguageModel> make_own_stack_strategy(sdk::VisionLanguageParts parts,
                                                                  const std::string& arch, const Settings& settings,
                                                                  const std::string& moe_refusal,
                                                                  const std::string& training_only,
                                                                  TextWarmStart warm_start = {}) {
  const builtin::models::ModelConfig config = stack_config(arch, parts.text_config, moe_refusal);
  parts.text = std::make_shared<Stack>(config, parts.frames * tokens_per_image(parts, arch), settings);
  return std::make_shared<OwnStackStrategy>(std::move(parts), arch, training_only, std::move(warm_start));
}

}  // namespace kforge::vlm
