// kforge.load_checkpoint and kforge.Model: a checkpoint's tensors, config and train state; its model's forward,
// generation (KV cache) and activation capture.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "bindings.h"
#include "generate/capture.h"
#include "generate/checkpoint_model.h"
#include "generate/generate.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/kinds.h"
#include "plugin_host.h"
#include "value_convert.h"

namespace kforge::python {

namespace py = pybind11;

namespace {

/// A loaded checkpoint's model, in eval mode; Python's kforge.Model.
class CheckpointModule {
 public:
  explicit CheckpointModule(generate::CheckpointModel loaded) : loaded_(std::move(loaded)) { loaded_.model->eval(); }

  static std::shared_ptr<CheckpointModule> open(const std::filesystem::path& dir,
                                                const std::vector<std::string>& overrides) {
    return std::make_shared<CheckpointModule>(generate::load_checkpoint_model(dir, registry(), overrides));
  }

  at::Tensor forward(const at::Tensor& tokens) {
    const at::NoGradGuard no_grad;
    return loaded_.model->forward(tokens);
  }

  std::vector<std::vector<int64_t>> generate(const std::vector<std::vector<int64_t>>& prompts,
                                             const generate::GenerateOptions& options) {
    return generate::generate(*loaded_.model, prompts, options);
  }

  std::map<std::string, at::Tensor> capture(const at::Tensor& tokens, const std::vector<std::string>& points) {
    const std::vector<std::string> known = hook_points();
    for (const std::string& point : points) {
      if (std::find(known.begin(), known.end(), point) == known.end()) {
        throw sdk::Error(fmt::format("Model.capture: the model has no hook point '{}'; its points are {}", point,
                                     fmt::join(known, ", ")));
      }
    }
    return generate::capture(*loaded_.model, tokens, points);
  }

  std::vector<std::string> hook_points() const {
    const std::string type = loaded_.job.view("model").get_string("model_type");
    const auto& patterns = registry().get(sdk::kind::model, type, "[model] model_type").meta.hook_points;
    return generate::hook_point_names(patterns, static_cast<int64_t>(loaded_.model->blocks().size()));
  }

  /// The model's live parameters and buffers (no copy: writing into one changes what forward computes).
  std::map<std::string, at::Tensor> state_dict() const {
    std::map<std::string, at::Tensor> tensors;
    for (const auto& p : loaded_.model->named_parameters()) tensors[p.key()] = p.value().detach();
    for (const auto& b : loaded_.model->named_buffers()) tensors[b.key()] = b.value();
    return tensors;
  }

  const generate::CheckpointModel& loaded() const { return loaded_; }

 private:
  generate::CheckpointModel loaded_;
};

py::tuple load_checkpoint(const std::filesystem::path& dir, const std::vector<std::string>& overrides) {
  const generate::CheckpointModel loaded = generate::load_checkpoint_model(dir, registry(), overrides);
  return py::make_tuple(loaded.snapshot.model, value_to_python(loaded.job.tree),
                        json_to_python(loaded.snapshot.train_state));
}

}  // namespace

void bind_checkpoint(py::module_& m) {
  m.def("load_checkpoint", &load_checkpoint, py::arg("dir"), py::arg("overrides") = std::vector<std::string>{});
}

void bind_model(py::module_& m) {
  py::class_<CheckpointModule, std::shared_ptr<CheckpointModule>>(m, "Model")
      .def_static("from_checkpoint", &CheckpointModule::open, py::arg("dir"),
                  py::arg("overrides") = std::vector<std::string>{})
      .def("forward", &CheckpointModule::forward, py::arg("tokens"), py::call_guard<py::gil_scoped_release>())
      .def("__call__", &CheckpointModule::forward, py::arg("tokens"), py::call_guard<py::gil_scoped_release>())
      .def(
          "generate",
          [](CheckpointModule& self, const std::vector<std::vector<int64_t>>& prompts, int64_t max_new_tokens,
             double temperature, int64_t top_k, double top_p, int64_t eos_id, uint64_t seed) {
            const generate::GenerateOptions options{max_new_tokens, temperature, top_k, top_p, eos_id, seed, 0};
            const py::gil_scoped_release released;
            return self.generate(prompts, options);
          },
          py::arg("prompts"), py::arg("max_new_tokens") = 64, py::arg("temperature") = 1.0, py::arg("top_k") = 0,
          py::arg("top_p") = 1.0, py::arg("eos_id") = -1, py::arg("seed") = 0)
      .def("capture", &CheckpointModule::capture, py::arg("tokens"), py::arg("points"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("hook_points", &CheckpointModule::hook_points)
      .def("state_dict", &CheckpointModule::state_dict)
      .def_property_readonly("config",
                             [](const CheckpointModule& self) { return value_to_python(self.loaded().job.tree); })
      .def_property_readonly("step", [](const CheckpointModule& self) { return self.loaded().snapshot.step; })
      .def_property_readonly("path", [](const CheckpointModule& self) { return self.loaded().step_dir.string(); })
      .def_property_readonly("max_seq_len",
                             [](const CheckpointModule& self) { return self.loaded().model->max_seq_len(); });
}

}  // namespace kforge::python
