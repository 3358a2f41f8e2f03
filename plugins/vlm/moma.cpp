// MoMa: the [vlm] checks, the blocks over one RoPE axis (restarting after a clip's padding), the FLOPs, the routing
// metrics and the factory.
#include "moma.h"

#include <ATen/ATen.h>
#include <kforge/sdk/config_view.h>
#include <kforge/sdk/error.h>

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <tuple>

#include "own_stack_strategy.h"

namespace kforge::vlm {

namespace models = builtin::models;

namespace {

constexpr const char* kMoMaArch = "moma";

// The experts of each modality, indexed as kModalities; ConfigError for a modality without experts or an unknown one.
std::array<int64_t, 2> checked_experts(const std::map<std::string, int64_t>& experts) {
  std::array<int64_t, 2> out{};
  for (const auto& [name, count] : experts) {
    const auto m = std::find(kModalities.begin(), kModalities.end(), name);
    if (m == kModalities.end() || count < 1) {
      throw sdk::ConfigError("[vlm] moma_experts_per_modality has " + name + " = " + std::to_string(count) +
                             ": it takes image and text, each with at least 1 expert (for dense per-modality FFNs use "
                             "arch = \"mot\")");
    }
    out[static_cast<size_t>(m - kModalities.begin())] = count;
  }
  for (size_t m = 0; m < kModalities.size(); ++m) {
    if (out[m] == 0) {
      throw sdk::ConfigError(std::string("[vlm] moma_experts_per_modality has no entry for ") + kModalities[m] +
                             "; give each of image and text its expert count");
    }
  }
  return out;
}

}  // namespace

MoMa::MoMa(const models::ModelConfig& config, int64_t image_positions, const MoMaSettings& s)
    : OwnStack(kMoMaArch, config, image_positions) {
  require_image_then_text("[vlm] moma_modalities", s.modalities);
  experts_ = checked_experts(s.experts_per_modality);
  if (s.capacity_factor < 0 || s.capacity_factor > 1) {
    throw sdk::ConfigError("[vlm] moma_capacity_factor = " + std::to_string(s.capacity_factor) +
                           ": must be in [0, 1], the fraction of its modality's tokens each expert picks (0: 1 / the "
                           "modality's experts)");
  }
  for (size_t m = 0; m < kModalities.size(); ++m) {
    capacity_factor_[m] = s.capacity_factor > 0 ? s.capacity_factor : 1.0 / static_cast<double>(experts_[m]);
  }
  for (int64_t i = 0; i < config_.n_layers; ++i) {
    moma_layers_.push_back(std::make_shared<MoMaBlock>(config_, experts_, capacity_factor_, s.gumbel_noise));
    add_layer(moma_layers_.back());
  }
  const auto norm = register_module(
      "norm", models::make_norm(config_.norm_type, config_.dim, config_.norm_eps, config_.fused_kernels));
  set_final_norm(norm);
  init_weights();
}

at::Tensor MoMa::run_layers(const at::Tensor& x, const at::Tensor& doc_starts) {
  at::Tensor cos, sin;
  if (doc_starts.defined()) {  // positions restart at each document: the real ones from 0 at the first real image token
    std::tie(cos, sin) = rope_.gather(at::arange(x.size(1), doc_starts.options()) - doc_starts, x);
  } else {
    std::tie(cos, sin) = rope_.slice(x.size(1), x);
  }
  return run_blocks(x, [this, cos, sin, doc_starts](size_t i, models::AttentionSeam seam) -> BlockFn {
    return [layer = moma_layers_[i], image_positions = image_positions_, cos, sin, doc_starts,
            seam](const at::Tensor& in) { return layer->forward(in, image_positions, cos, sin, doc_starts, seam); };
  });
}

double MoMa::flops_per_token(int64_t seq_len) const {
  const int64_t positions = seq_len + image_positions_;
  const double dense =
      config_.flops_per_token(positions) * static_cast<double>(positions) / static_cast<double>(seq_len);
  // 6 FLOPs per weight a position multiplies, forward and backward: swap the dense FFN's for the modality's.
  const double matrices = static_cast<double>(config_.mlp_matrices() * config_.dim);
  const double dense_ffn = matrices * static_cast<double>(config_.computed_ffn_hidden_dim());
  const std::array<int64_t, 2> count = {image_positions_, seq_len};
  double change = 0;
  for (size_t m = 0; m < kModalities.size(); ++m) {
    const auto experts = static_cast<double>(experts_[m]);
    const double routed =
        static_cast<double>(config_.dim) * experts +
        experts * capacity_factor_[m] * matrices * static_cast<double>(config_.computed_expert_ffn_hidden_dim());
    change += static_cast<double>(count[m]) * (routed - dense_ffn);
  }
  return dense + 6.0 * static_cast<double>(config_.n_layers) * change / static_cast<double>(seq_len);
}

std::vector<std::pair<std::string, double>> MoMa::step_metrics() {
  if (moma_layers_.empty() || !moma_layers_.front()->mlp()[kImage]->last_coverage().defined()) return {};
  std::vector<std::pair<std::string, double>> out;
  for (size_t m = 0; m < kModalities.size(); ++m) {
    double sum = 0;
    for (const auto& layer : moma_layers_) sum += layer->mlp()[m]->last_coverage().item<double>();
    out.emplace_back(std::string("moma/") + kModalities[m] + "_coverage",
                     sum / static_cast<double>(moma_layers_.size()));
  }
  return out;
}

std::shared_ptr<sdk::VisionLanguageModel> make_moma(const sdk::BuildContext& ctx, sdk::VisionLanguageParts parts) {
  const MoMaSettings settings{.modalities = ctx.section.get_string_list("moma_modalities"),
                              .experts_per_modality = ctx.section.get_int_dict("moma_experts_per_modality"),
                              .capacity_factor = ctx.section.get_float("moma_capacity_factor"),
                              .gumbel_noise = ctx.section.get_bool("moma_gumbel_noise")};
  return make_own_stack_strategy<MoMa>(
      std::move(parts), kMoMaArch, settings,
      "MoMa takes its experts from [vlm] moma_experts_per_modality (KempnerForge refuses a text MoE under it too); "
      "set num_experts = 0",
      "its experts choose their tokens over the whole batch, which is not causal (KempnerForge's MoMa is "
      "training-only too)");
}

}  // namespace kforge::vlm
