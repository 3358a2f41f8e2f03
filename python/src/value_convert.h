// Config trees and JSON documents as Python objects (nested dicts, lists and scalars), and dicts as config trees.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bindings.h"
#include "config/value.h"

namespace kforge::python {

/// A config tree as nested dicts, lists, bools, ints, floats, strings and None.
pybind11::object value_to_python(const config::Value& value);

/// A Python dict as a raw config tree, each value's source `origin` (its line 0). Throws sdk::ConfigError naming the
/// key of a value that is none of dict, list, tuple, bool, int, float, str or None.
config::Value value_from_python(pybind11::handle object, const std::string& origin, const std::string& key = "");

/// A JSON document (a checkpoint's train state) as Python objects.
pybind11::object json_to_python(const nlohmann::json& document);

}  // namespace kforge::python
