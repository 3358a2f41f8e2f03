// libkforge_data: registers the "memmap" dataset (pre-tokenised .npy / .bin shards).
#include "kforge/sdk/plugin.h"
#include "memmap_dataset.h"

namespace {

constexpr kforge_config_key kMemmapKeys[] = {
    {"bin_dtype", "string", "\"\"",
     "token width of raw .bin shards: \"uint16\" or \"uint32\" (default: tatm's metadata.yaml beside them, else "
     "inferred from the file size as KempnerForge does; .npy headers carry it)"},
};

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::dataset, "memmap", "1.0.0",
                               "Memory-mapped token shards (.npy uint16/uint32, raw .bin), non-overlapping windows",
                               kMemmapKeys),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_dataset("memmap", [](const kforge::sdk::BuildContext& ctx, const kforge::sdk::DatasetSpec& spec) {
    const auto dtype = kforge::builtin::data::parse_bin_dtype(ctx.section.get_string("bin_dtype"));
    return std::make_unique<kforge::builtin::data::MemmapDataset>(spec, dtype, &ctx.log);
  });
}

}  // namespace

KFORGE_PLUGIN("data", "1.0.0", "Built-in datasets: memory-mapped token shards", kComponents, register_all)
