// Test plugin: hook "fixture_dump_parameters", which after every step writes each parameter and buffer this rank
// holds, its raw bytes, to [train] fixture_dump_dir/rank_<RANK>/<name> (the last step's remain): what the
// model-parallel tests compare between the ranks of a group to see that the tensors they replicate stay bit-identical.
#include <ATen/ATen.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <kforge/sdk/plugin.h>

namespace {

class DumpParameters final : public kforge::sdk::Hook {
 public:
  explicit DumpParameters(const std::string& dir) {
    const char* rank = std::getenv("RANK");
    dir_ = std::filesystem::path(dir) / ("rank_" + std::string(rank != nullptr ? rank : "0"));
    std::filesystem::create_directories(dir_);
  }

  void on_step_end(const kforge::sdk::StepEvent& event) override {
    for (const auto& item : event.model->named_parameters(/*recurse=*/true)) write(item.key(), item.value());
    for (const auto& item : event.model->named_buffers(/*recurse=*/true)) write(item.key(), item.value());
  }

 private:
  void write(const std::string& name, const at::Tensor& tensor) const {
    const at::Tensor t = tensor.detach().contiguous();
    std::ofstream out(dir_ / name, std::ios::binary | std::ios::trunc);
    out.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.nbytes()));
    if (!out) throw kforge::sdk::Error("fixture_dump_parameters: cannot write " + (dir_ / name).string());
  }

  std::filesystem::path dir_;
};

constexpr kforge_config_key kKeys[] = {
    {"fixture_dump_dir", "string", "\"\"", "directory the parameters are written under, one folder per rank"},
};
constexpr kforge_component_info kComponents[] = {
    KFORGE_COMPONENT_WITH_KEYS(kforge::sdk::kind::hook, "fixture_dump_parameters", "0.1.0",
                               "writes every parameter's and buffer's bytes after each step", kKeys),
};

void register_all(kforge::sdk::Registrar& r) {
  r.add_hook("fixture_dump_parameters", [](const kforge::sdk::BuildContext& ctx) {
    return std::make_unique<DumpParameters>(ctx.section.get_string("fixture_dump_dir"));
  });
}

}  // namespace

KFORGE_PLUGIN("fixture-dump-parameters", "0.1.0", "model-parallel test fixture: per-rank parameter bytes", kComponents,
              register_all)
