// Model decoding for the scorer: an sdk::Model's cached decoding and decode-state forks as ScoringModel's functions.
#pragma once

#include <c10/core/Device.h>

#include "eval_tasks/scorer.h"
#include "kforge/sdk/model.h"

namespace kforge::eval_tasks {

/// ScoringModel::decoder from `model`'s start_decoding/decode on `device` (which outlive it); empty for a model
/// without cached decoding (the sdk default refuses start_decoding).
decltype(ScoringModel::decoder) cached_decoder(sdk::Model& model, at::Device device);

/// ScoringModel::shared_prefix from `model`'s start_decoding/decode/fork_decoding on `device` (which outlive it);
/// empty for a model that does not fork its decoding states (the sdk default refuses fork_decoding).
decltype(ScoringModel::shared_prefix) shared_prefix(sdk::Model& model, at::Device device);

}  // namespace kforge::eval_tasks
