// Value: the config tree (scalars, lists, tables), each node remembering where it came from.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kforge::config {

/// Where a value was set: a file position, the command line, or the built-in default.
struct Source {
  std::string origin;  ///< file path, "command line", or "" for a default
  int line = 0;
  int column = 0;
  /// "cfg.toml:12:5", "command line", or "default".
  std::string describe() const;
};

struct Value {
  enum class Type { Null, Bool, Int, Float, String, List, Table };

  Type type = Type::Null;
  bool b = false;
  int64_t i = 0;
  double f = 0.0;
  std::string s;
  std::vector<Value> list;
  std::vector<std::pair<std::string, Value>> table;  ///< insertion-ordered
  Source source;

  static Value null(Source src = {});
  static Value boolean(bool v, Source src = {});
  static Value integer(int64_t v, Source src = {});
  static Value floating(double v, Source src = {});
  static Value string(std::string v, Source src = {});
  static Value make_list(std::vector<Value> items, Source src = {});
  static Value make_table(Source src = {});

  bool is_null() const { return type == Type::Null; }
  bool is_table() const { return type == Type::Table; }
  /// Child of a table, or nullptr.
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  /// Sets (replacing) a child of a table and returns it.
  Value& set(const std::string& key, Value value);
  /// The number as a double (Int or Float).
  double as_number() const { return type == Type::Int ? static_cast<double>(i) : f; }

  /// Inline TOML literal of this value (tables as inline tables).
  std::string to_toml() const;
  /// to_toml() for a message: past `max_chars` it is cut and says how much is left out.
  std::string to_toml_brief(size_t max_chars = 160) const;
};

/// "bool", "int", "float", "string", "list", "table" or "null".
const char* type_name(Value::Type type);

/// The whole tree as a TOML document: top-level tables become [sections].
std::string to_toml_document(const Value& root);

}  // namespace kforge::config
