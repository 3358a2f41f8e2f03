// The [vlm] rules of the built-in arches (KempnerForge's VLMConfig checks), run by the host as each strategy's
// validation hook: their own keys while the config loads, their shapes against [model] and [distributed] once the
// run starts.
#pragma once

#include <kforge/sdk/config_rules.h>

namespace kforge::vlm {

/// cross_attention: a block every n >= 1 layers, heads >= 0; with the world: blocks, heads and key/value heads
/// that fit the text model.
void check_cross_attention(const sdk::ResolvedConfig& config);
/// mot: its modalities (image and text among at least two, no duplicates), heads >= 0, the warm start's two keys set
/// together.
void check_mot(const sdk::ResolvedConfig& config);
/// moma: its modalities, an expert count > 0 for exactly each, capacity >= 0; with the world: no [model] experts and
/// no expert parallelism.
void check_moma(const sdk::ResolvedConfig& config);

}  // namespace kforge::vlm
