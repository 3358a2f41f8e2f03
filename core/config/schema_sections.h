// The schema's section groups, one function per schema_<group>.cpp, assembled by core_schema().
// Internal to core/config.
#pragma once

#include <vector>

#include "config/schema.h"

namespace kforge::config::schema_parts {

/// [model].
std::vector<SectionSpec> model_sections();
/// [train], [optimizer], [scheduler].
std::vector<SectionSpec> training_sections();
/// [data], [eval].
std::vector<SectionSpec> data_sections();
/// [distributed], [checkpoint], [metrics], [profiling].
std::vector<SectionSpec> runtime_sections();
/// [vision_encoder], [adapter], [vlm], [video], [time_embedding].
std::vector<SectionSpec> multimodal_sections();
/// [vlm]: the keys of every arch (an arch's own keys are its strategy plugin's).
SectionSpec vlm_section();

/// Element schema of [[train.freeze]] and [[vlm.freeze]]: FreezeSpec(module, frozen).
const SectionSpec& freeze_spec_schema();
/// Element schema of [[train.freeze_schedule]] and [[vlm.freeze_schedule]]: FreezeStage(start_step, specs).
const SectionSpec& freeze_stage_schema();

}  // namespace kforge::config::schema_parts
