// The check that a job's model has the parameter and [model] key layout HfArchitecture and the name mapping assume.
#pragma once

#include "config/job_config.h"
#include "plugins/registry.h"

namespace kforge::interop {

/// Throws sdk::ConfigError unless the job's model component declares KFORGE_CAP_LLAMA_LAYOUT (its
/// parameters and [model] keys are those the Hugging Face name mapping and HfArchitecture assume).
void require_llama_layout(const plugins::Registry& registry, const config::JobConfig& job);

}  // namespace kforge::interop
