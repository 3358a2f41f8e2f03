// The losses plugin's entry point: component metadata and registration.
#include "cross_entropy.h"
#include "kforge/sdk/plugin.h"

namespace {

using kforge::sdk::reads;

// The [train] keys of the core schema each loss reads.
constexpr kforge_config_key kCrossEntropyCoreKeys[] = {reads("z_loss_weight")};
constexpr kforge_config_key kChunkedCoreKeys[] = {reads("z_loss_weight"), reads("ce_chunk_size")};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::loss, "cross_entropy", "1.0.0",
                     "mean token cross-entropy (ignore_index -100), plus z-loss when z_loss_weight > 0",
                     kforge::sdk::config_keys(kCrossEntropyCoreKeys),
                     kforge::sdk::capabilities(KFORGE_CAP_TENSOR_PARALLEL)),
    KFORGE_COMPONENT(kforge::sdk::kind::loss, "chunked_cross_entropy", "1.0.0",
                     "cross_entropy computed ce_chunk_size tokens at a time (0: 4096)",
                     kforge::sdk::config_keys(kChunkedCoreKeys), kforge::sdk::capabilities(KFORGE_CAP_TENSOR_PARALLEL)),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_loss("cross_entropy", kforge::builtin::losses::make_cross_entropy);
  r.add_loss("chunked_cross_entropy", kforge::builtin::losses::make_chunked_cross_entropy);
}

}  // namespace

KFORGE_PLUGIN("losses", "1.0.0", "Token cross-entropy losses (plain and chunked) with PaLM z-loss", kComponents,
              register_all)
