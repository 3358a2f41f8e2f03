// The pipeline schedules plugin's entry point: component metadata and registration.
#include <kforge/sdk/plugin.h>

#include "gpipe.h"
#include "interleaved_one_f_one_b.h"
#include "one_f_one_b.h"

namespace {

constexpr kforge_config_key kInterleavedKeys[] = {
    {"virtual_stages", "int", "2", "model chunks per rank (virtual stages); the bubble shrinks by this factor"},
};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::pipeline_schedule, "gpipe", "1.0.0",
                     "GPipe: all forwards, then all backwards (holds every micro-batch's activations)"),
    KFORGE_COMPONENT(kforge::sdk::kind::pipeline_schedule, "1f1b", "1.0.0",
                     "1F1B: warm-up forwards, then a forward and a backward in turn (grad_accum_steps >= pp)"),
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::pipeline_schedule, "interleaved_1f1b", "1.0.0",
                               "interleaved 1F1B over virtual_stages chunks per rank (grad_accum_steps a multiple of "
                               "pp); the bubble shrinks by virtual_stages",
                               kInterleavedKeys),
};

void register_all(kforge::sdk::Registrar& r) {
  using namespace kforge::builtin::schedules;
  r.add_pipeline_schedule("gpipe", [](const kforge::sdk::BuildContext&) { return std::make_unique<GPipe>(); });
  r.add_pipeline_schedule("1f1b", [](const kforge::sdk::BuildContext&) { return std::make_unique<OneFOneB>(); });
  r.add_pipeline_schedule("interleaved_1f1b", [](const kforge::sdk::BuildContext& ctx) {
    return std::make_unique<InterleavedOneFOneB>(static_cast<int>(ctx.section.get_int("virtual_stages")));
  });
}

}  // namespace

KFORGE_PLUGIN("schedules", "1.0.0", "Pipeline-parallel schedules: GPipe, 1F1B and interleaved 1F1B", kComponents,
              register_all)
