// GradScaler's dynamic loss scale (see loss_scaler.h).
#include "train/loss_scaler.h"

#include <ATen/ATen.h>

#include <cmath>

#include "config/job_config.h"
#include "kforge/sdk/error.h"

namespace kforge::train {

LossScaleSettings loss_scale_settings(const config::JobConfig& job) {
  const config::SectionView train = job.view("train");
  return {train.get_float("loss_scale_init"), train.get_float("loss_scale_growth"),
          train.get_float("loss_scale_backoff"), train.get_int("loss_scale_growth_interval")};
}

LossScaler::LossScaler(LossScaleSettings settings)
    : settings_(settings), scale_(static_cast<float>(settings.init)) {}

bool LossScaler::unscale(const std::vector<sdk::NamedParameter>& params) const {
  const auto inverse = static_cast<float>(1.0 / static_cast<double>(scale_));
  const at::NoGradGuard no_grad;
  std::vector<at::Tensor> bad;
  for (const auto& p : params) {
    if (!p.tensor.grad().defined()) continue;
    at::Tensor g = p.tensor.mutable_grad();
    g.mul_(inverse);
    bad.push_back(at::isfinite(g).logical_not().any().reshape({1}));
  }
  return !bad.empty() && at::cat(bad).any().item<bool>();
}

void LossScaler::update(bool found_inf) {
  if (found_inf) {
    scale_ = static_cast<float>(static_cast<double>(scale_) * settings_.backoff);
    growth_tracker_ = 0;
    return;
  }
  if (++growth_tracker_ < settings_.growth_interval) return;
  const auto grown = static_cast<float>(static_cast<double>(scale_) * settings_.growth);
  if (std::isfinite(grown)) scale_ = grown;
  growth_tracker_ = 0;
}

nlohmann::json LossScaler::state() const {
  return {{"scale", static_cast<double>(scale_)}, {"growth_tracker", growth_tracker_}};
}

void LossScaler::load_state(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("scale") || !state.at("scale").is_number() ||
      !state.contains("growth_tracker") || !state.at("growth_tracker").is_number_integer()) {
    throw sdk::Error("checkpoint train_state.loss_scale = " + state.dump() +
                     ": needs a number \"scale\" and an integer \"growth_tracker\"");
  }
  const auto scale = static_cast<float>(state.at("scale").get<double>());
  if (!(scale > 0) || !std::isfinite(scale)) {
    throw sdk::Error("checkpoint train_state.loss_scale.scale = " + state.at("scale").dump() +
                     ": a loss scale must be a finite number > 0");
  }
  scale_ = scale;
  growth_tracker_ = state.at("growth_tracker").get<int64_t>();
}

}  // namespace kforge::train
