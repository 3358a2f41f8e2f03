// Config trees and JSON documents to and from Python objects (see value_convert.h).
#include "value_convert.h"

#include <fmt/format.h>

#include "kforge/sdk/error.h"

namespace kforge::python {

namespace py = pybind11;

py::object value_to_python(const config::Value& value) {
  using Type = config::Value::Type;
  switch (value.type) {
    case Type::Null: return py::none();
    case Type::Bool: return py::bool_(value.b);
    case Type::Int: return py::int_(value.i);
    case Type::Float: return py::float_(value.f);
    case Type::String: return py::str(value.s);
    case Type::List: {
      py::list items;
      for (const config::Value& item : value.list) items.append(value_to_python(item));
      return std::move(items);
    }
    case Type::Table: {
      py::dict table;
      for (const auto& [key, child] : value.table) table[py::str(key)] = value_to_python(child);
      return std::move(table);
    }
  }
  return py::none();
}

config::Value value_from_python(py::handle object, const std::string& origin, const std::string& key) {
  const config::Source source{origin, 0, 0};
  if (object.is_none()) return config::Value::null(source);
  if (py::isinstance<py::bool_>(object)) return config::Value::boolean(object.cast<bool>(), source);
  if (py::isinstance<py::int_>(object)) return config::Value::integer(object.cast<int64_t>(), source);
  if (py::isinstance<py::float_>(object)) return config::Value::floating(object.cast<double>(), source);
  if (py::isinstance<py::str>(object)) return config::Value::string(object.cast<std::string>(), source);
  if (py::isinstance<py::dict>(object)) {
    config::Value table = config::Value::make_table(source);
    for (const auto& [name, child] : object.cast<py::dict>()) {
      const std::string child_key =
          key.empty() ? py::str(name).cast<std::string>() : key + "." + py::str(name).cast<std::string>();
      table.set(py::str(name).cast<std::string>(), value_from_python(child, origin, child_key));
    }
    return table;
  }
  if (py::isinstance<py::list>(object) || py::isinstance<py::tuple>(object)) {
    std::vector<config::Value> items;
    for (const py::handle item : object) items.push_back(value_from_python(item, origin, key));
    return config::Value::make_list(std::move(items), source);
  }
  throw sdk::ConfigError(fmt::format(
      "{}: {} = {}: a config value is a dict, list, tuple, bool, int, float, str or None, not {}", origin, key,
      py::repr(object).cast<std::string>(), py::str(py::type::of(object).attr("__name__")).cast<std::string>()));
}

py::object json_to_python(const nlohmann::json& document) {
  return py::module_::import("json").attr("loads")(document.dump());
}

}  // namespace kforge::python
