// The native module _kforge: kforge's host (config, trainer, checkpoints, generation, capture) for kforge/__init__.py.
#include "bindings.h"

PYBIND11_MODULE(_kforge, m) {
  m.doc() = "kforge's native runtime (use the kforge package, which checks torch's build first)";
  kforge::python::bind_errors(m);
  kforge::python::bind_plugins(m);
  kforge::python::bind_config(m);
  kforge::python::bind_checkpoint(m);
  kforge::python::bind_model(m);
  kforge::python::bind_train(m);
  kforge::python::bind_components(m);
}
