// A component's validation hook reports a broken rule as kforge reports its own ("<file>:<line>: [section] key =
// value: message"), and a report that is not an object of strings is a ConfigError naming the component, never an
// escaped JSON exception.
#include "config/component_rules.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/toml_reader.h"
#include "support/expect_text.h"

namespace kforge::config {
namespace {

ComponentKeys reporting(const std::string& report) {
  ComponentKeys c;
  c.kind = "optimizer";
  c.name = "fixture";
  c.file = "libfixture.so";
  c.rules = [report](const std::string&) { return report; };
  return c;
}

TEST(ComponentRules, ABrokenRuleNamesTheFileLineKeyAndValue) {
  const Value tree = read_toml_string("[optimizer]\nlr = 0.5\n", "job.toml");
  const std::string error = test::config_error_of([&] {
    check_component_rules(tree, {reporting(R"({"section": "optimizer", "key": "lr", "message": "too big"})")}, 0);
  });
  test::expect_has(error, {"job.toml:2:", "[optimizer] lr = 0.5: too big"});
}

TEST(ComponentRules, AMalformedReportIsAConfigErrorNamingTheComponent) {
  const Value tree = read_toml_string("[optimizer]\nlr = 0.5\n", "job.toml");
  for (const std::string report : {"not json", "[1, 2]", R"({"section": 3, "message": "m"})"}) {
    const std::string error = test::config_error_of([&] { check_component_rules(tree, {reporting(report)}, 0); });
    test::expect_has(error, {"optimizer 'fixture' (libfixture.so): its config rules failed with a malformed report: " +
                             report});
  }
}

}  // namespace
}  // namespace kforge::config
