// Config rules of a component: what its validation hook (validator<Fn>() in plugin.h) reads, and how it reports a
// broken rule so that the host names the file, line, key and value.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kforge/sdk/error.h"
#include "kforge/sdk/export.h"

namespace kforge::sdk {

/// A broken rule of [section] key (key "": of the section as a whole). The host reports it as
/// "<file>:<line>: [section] key = value: message", or "<file>:<line>: message" for a section.
class KFORGE_SDK_API RuleError : public Error {
 public:
  RuleError(std::string section, std::string key, const std::string& message);
  ~RuleError() override;
  const std::string& section() const { return section_; }
  const std::string& key() const { return key_; }

 private:
  std::string section_, key_;
};

namespace detail {
struct ConfigTree;
}

/// One section of the resolved config. Keys have their resolved types (the schema checked them); a getter for a key
/// the section lacks, or of another type, throws sdk::Error naming it.
class KFORGE_SDK_API RuleSection {
 public:
  RuleSection(std::shared_ptr<const detail::ConfigTree> tree, std::string name);
  const std::string& name() const { return name_; }
  bool null(const std::string& key) const;
  bool b(const std::string& key) const;
  int64_t i(const std::string& key) const;
  /// A number (an integer too).
  double f(const std::string& key) const;
  std::string s(const std::string& key) const;
  std::vector<std::string> strings(const std::string& key) const;
  /// A table of name = integer (e.g. experts per modality), by name.
  std::map<std::string, int64_t> int_dict(const std::string& key) const;
  /// The value as the host prints it in a message (TOML: "[\"image\", \"text\"]").
  std::string toml(const std::string& key) const;

  /// Throws RuleError(section, key, message) unless ok.
  void require(bool ok, const std::string& key, const std::string& message) const;
  void positive(const std::string& key) const;      ///< "must be > 0"
  void non_negative(const std::string& key) const;  ///< "must be >= 0"
  /// Throws RuleError(section, "", message): the section as a whole breaks a rule.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::shared_ptr<const detail::ConfigTree> tree_;
  std::string name_;
};

/// The resolved config a hook checks: every section the config has, and the world size.
class KFORGE_SDK_API ResolvedConfig {
 public:
  /// Parses the host's JSON ({"world_size": N, "config": {...}}); throws sdk::Error on malformed text.
  explicit ResolvedConfig(const std::string& json);
  /// 0 while the config loads; the number of processes once the run starts.
  int64_t world_size() const;
  bool has(const std::string& section) const;
  /// Throws sdk::Error when the config has no such section.
  RuleSection section(const std::string& name) const;

 private:
  std::shared_ptr<const detail::ConfigTree> tree_;
};

namespace detail {

/// Runs `rules` on the host's JSON without letting an exception cross the C boundary: 0 when they pass; 1 with
/// {"section", "key", "message"} (a RuleError's, or key "" and the section "" for any other error) in `out`.
KFORGE_SDK_API int run_rules(const char* config_json, char* out, size_t out_len,
                             void (*rules)(const ResolvedConfig&)) noexcept;

}  // namespace detail
}  // namespace kforge::sdk
