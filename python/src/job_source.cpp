// A job config from a path or a dict (see job_source.h), and kforge.load_config.
#include "job_source.h"

#include "config/resolver.h"
#include "plugin_host.h"
#include "plugins/catalog.h"
#include "value_convert.h"

namespace kforge::python {

namespace py = pybind11;

namespace {

/// "--section.key=value" for each override, whether or not it was written with the dashes.
std::vector<std::string> with_dashes(const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  for (const std::string& o : overrides) out.push_back(o.rfind("--", 0) == 0 ? o : "--" + o);
  return out;
}

}  // namespace

config::JobConfig load_job(py::handle config, const std::vector<std::string>& overrides) {
  const config::Catalog catalog = plugins::make_catalog(registry());
  if (py::isinstance<py::dict>(config)) {
    const config::Value raw =
        config::apply_overrides(value_from_python(config, "the config dict"), with_dashes(overrides));
    return config::resolve_job_config(raw, {}, catalog);
  }
  if (py::isinstance<py::str>(config) || py::hasattr(config, "__fspath__")) {
    const std::string path = py::module_::import("os").attr("fspath")(config).cast<std::string>();
    return config::load_job_config(path, with_dashes(overrides), catalog);
  }
  throw py::type_error("a kforge config is a TOML file's path (str or os.PathLike) or a dict of sections, not " +
                       py::str(py::type::of(config).attr("__name__")).cast<std::string>());
}

void bind_config(py::module_& m) {
  m.def(
      "load_config",
      [](py::handle config, const std::vector<std::string>& overrides) {
        return value_to_python(load_job(config, overrides).tree);
      },
      py::arg("config"), py::arg("overrides") = std::vector<std::string>{});
}

}  // namespace kforge::python
