// The parts of the native module _kforge, one file each, added to the module by module.cpp.
#pragma once

// First: Python.h, then pybind11 and its torch.Tensor caster (THPVariable_Wrap: the tensor itself, no copy).
#include <torch/csrc/utils/pybind.h>

#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

namespace kforge::python {

void bind_errors(pybind11::module_& m);
void bind_plugins(pybind11::module_& m);
void bind_config(pybind11::module_& m);
void bind_checkpoint(pybind11::module_& m);
void bind_model(pybind11::module_& m);
void bind_train(pybind11::module_& m);
void bind_components(pybind11::module_& m);

}  // namespace kforge::python
