// The parts of the native module _kforge, one file each, added to the module by module.cpp.
#pragma once

#include <torch/csrc/utils/pybind.h>  // first: Python.h, then pybind11 and its torch.Tensor caster

#include <pybind11/stl.h>

namespace kforge::python {

void bind_errors(pybind11::module_& m);
void bind_plugins(pybind11::module_& m);
void bind_config(pybind11::module_& m);
void bind_checkpoint(pybind11::module_& m);
void bind_model(pybind11::module_& m);
void bind_train(pybind11::module_& m);

}  // namespace kforge::python
