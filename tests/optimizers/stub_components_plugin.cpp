// A test-only plugin naming a model and a dataset, so configs resolve without the real ones built.
#include <stdexcept>

#include "kforge/sdk/plugin.h"

namespace {

constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT(kforge::sdk::kind::model, "kforge_test_stub", "0.0.1", "placeholder; building it throws"),
    KFORGE_COMPONENT(kforge::sdk::kind::dataset, "kforge_test_stub", "0.0.1", "placeholder; building it throws"),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_model("kforge_test_stub", [](const kforge::sdk::BuildContext&) -> std::shared_ptr<kforge::sdk::Model> {
    throw std::runtime_error("kforge_test_stub model is a placeholder");
  });
  r.add_dataset("kforge_test_stub", [](const kforge::sdk::BuildContext&, const kforge::sdk::DatasetSpec&)
                                        -> std::unique_ptr<kforge::sdk::Dataset> {
    throw std::runtime_error("kforge_test_stub dataset is a placeholder");
  });
}

}  // namespace

KFORGE_PLUGIN("kforge-test-stubs", "0.0.1", "placeholder model and dataset for component tests", kComponents,
              register_all)
