// SectionView: the sdk::ConfigView a plugin gets over one resolved config section.
#pragma once

#include <string>

#include "config/value.h"
#include "kforge/sdk/config_view.h"

namespace kforge::config {

class SectionView final : public sdk::ConfigView {
 public:
  /// `table` must outlive the view.
  SectionView(std::string name, const Value& table);

  std::string section() const override { return name_; }
  bool has(std::string_view key) const override;
  bool get_bool(std::string_view key) const override;
  int64_t get_int(std::string_view key) const override;
  double get_float(std::string_view key) const override;
  std::string get_string(std::string_view key) const override;
  std::vector<double> get_float_list(std::string_view key) const override;
  std::vector<int64_t> get_int_list(std::string_view key) const override;
  std::vector<std::string> get_string_list(std::string_view key) const override;
  std::map<std::string, int64_t> get_int_dict(std::string_view key) const override;

 private:
  const Value& get(std::string_view key, Value::Type type, const char* wanted) const;
  std::string name_;
  const Value& table_;
};

}  // namespace kforge::config
