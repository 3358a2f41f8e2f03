// ConfigView: read-only, typed access to one validated config section (no toml++ types).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::sdk {

/// Getters throw kforge::sdk::ConfigError naming "[section].key" when the key is absent,
/// null, or not of the requested type. Keys are validated against the schema before any
/// plugin sees them, so a getter failing means the plugin asked for a key it did not declare.
class ConfigView {
 public:
  virtual ~ConfigView() = default;
  /// Section name, e.g. "optimizer".
  virtual std::string section() const = 0;
  /// True when the key exists and is not null.
  virtual bool has(std::string_view key) const = 0;
  virtual bool get_bool(std::string_view key) const = 0;
  virtual int64_t get_int(std::string_view key) const = 0;
  /// Accepts integer values too.
  virtual double get_float(std::string_view key) const = 0;
  virtual std::string get_string(std::string_view key) const = 0;
  virtual std::vector<double> get_float_list(std::string_view key) const = 0;
  virtual std::vector<int64_t> get_int_list(std::string_view key) const = 0;
  virtual std::vector<std::string> get_string_list(std::string_view key) const = 0;
  /// A table of integers (e.g. [vlm] moma_experts_per_modality), by key.
  virtual std::map<std::string, int64_t> get_int_dict(std::string_view key) const = 0;
};

}  // namespace kforge::sdk
