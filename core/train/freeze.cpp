// Parameter freezing (see freeze.h).
#include "train/freeze.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "cmdline/did_you_mean.h"
#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::train {
namespace {

// Python's fnmatch.fnmatchcase: '*' and '?' match any character ('.' included), no escapes.
bool matches(const std::string& pattern, const std::string& name) {
  return ::fnmatch(pattern.c_str(), name.c_str(), FNM_NOESCAPE) == 0;
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return matches(p, name); });
}

std::vector<FreezeSpec> read_specs(const config::Value& list, const std::string& key) {
  std::vector<FreezeSpec> specs;
  for (size_t k = 0; k < list.list.size(); ++k) {
    const config::Value& item = list.list[k];
    const config::Value& module = *item.find("module");
    specs.push_back({module.s, item.find("frozen")->b, fmt::format("{}[{}].module", key, k), module.source.describe()});
  }
  return specs;
}

void read_section(const config::Value& section, const std::string& name, FreezePlan& plan) {
  for (FreezeSpec& s : read_specs(*section.find("freeze"), name + ".freeze")) plan.base.push_back(std::move(s));
  const config::Value& stages = *section.find("freeze_schedule");
  for (size_t k = 0; k < stages.list.size(); ++k) {
    const config::Value& stage = stages.list[k];
    plan.schedule.push_back({stage.find("start_step")->i,
                             read_specs(*stage.find("specs"), fmt::format("{}.freeze_schedule[{}].specs", name, k))});
  }
}

// "layers.*", "layers.0.*", ... for every dotted prefix of every name: the did-you-mean candidates.
std::vector<std::string> prefix_patterns(const std::vector<sdk::NamedParameter>& params) {
  std::set<std::string> out;
  for (const auto& p : params) {
    for (size_t dot = p.name.find('.'); dot != std::string::npos; dot = p.name.find('.', dot + 1)) {
      out.insert(p.name.substr(0, dot) + ".*");
    }
    out.insert(p.name);
  }
  return {out.begin(), out.end()};
}

std::string top_level_prefixes(const std::vector<sdk::NamedParameter>& params) {
  std::set<std::string> tops;
  for (const auto& p : params) {
    const size_t dot = p.name.find('.');
    tops.insert(dot == std::string::npos ? p.name : p.name.substr(0, dot) + ".*");
  }
  std::string out;
  size_t shown = 0;
  for (const std::string& t : tops) {
    if (shown++ == 8) return out + ", ...";
    out += (out.empty() ? "" : ", ") + t;
  }
  return out;
}

[[noreturn]] void fail_no_match(const std::vector<sdk::NamedParameter>& params, const FreezeSpec& spec,
                                const ModuleAliases& aliases) {
  std::vector<std::string> candidates = prefix_patterns(params);
  std::string alias_list;
  for (const auto& [alias, patterns] : aliases) {
    candidates.push_back(alias);
    alias_list += (alias_list.empty() ? "" : ", ") + alias;
  }
  throw sdk::ConfigError(
      fmt::format("{}: {} = \"{}\": matches no parameter. It is an fnmatch pattern over full parameter names "
                  "(e.g. \"{}\"); the names start with {}{}.{} Fix the pattern or remove the spec.",
                  spec.source, spec.key, spec.module, params.empty() ? "" : params.front().name,
                  params.empty() ? "(the model has no parameters)" : top_level_prefixes(params),
                  alias_list.empty() ? "" : "; the module aliases are " + alias_list,
                  cmdline::did_you_mean(spec.module, candidates)));
}

// An alias's patterns, or the module itself as the one pattern.
std::vector<std::string> patterns_of(const FreezeSpec& spec, const ModuleAliases& aliases) {
  const auto alias = aliases.find(spec.module);
  return alias != aliases.end() ? alias->second : std::vector<std::string>{spec.module};
}

// A raw pattern must match some parameter; an alias may match none (a module without weights).
void check_spec(const std::vector<sdk::NamedParameter>& params, const FreezeSpec& spec, const ModuleAliases& aliases) {
  if (aliases.count(spec.module) != 0) return;
  const bool found = std::any_of(params.begin(), params.end(),
                                 [&](const sdk::NamedParameter& p) { return matches(spec.module, p.name); });
  if (!found) fail_no_match(params, spec, aliases);
}

// module -> frozen, the last write winning.
std::map<std::string, bool> by_module(const std::vector<FreezeSpec>& specs) {
  std::map<std::string, bool> out;
  for (const FreezeSpec& s : specs) out[s.module] = s.frozen;
  return out;
}

const char* state_name(bool frozen) { return frozen ? "frozen" : "trainable"; }

}  // namespace

bool FreezePlan::changes_at(int64_t step) const {
  return std::any_of(schedule.begin(), schedule.end(), [&](const FreezeStage& s) { return s.start_step == step; });
}

FreezePlan read_freeze_plan(const config::JobConfig& job) {
  FreezePlan plan;
  if (const config::Value* vlm = job.tree.find("vlm")) {
    read_section(*vlm, "vlm", plan);
    for (const auto& [alias, patterns] : vlm->find("module_patterns")->table) {
      for (const config::Value& p : patterns.list) plan.aliases[alias].push_back(p.s);
    }
  }
  read_section(*job.tree.find("train"), "train", plan);
  std::stable_sort(plan.schedule.begin(), plan.schedule.end(),
                   [](const FreezeStage& a, const FreezeStage& b) { return a.start_step < b.start_step; });
  return plan;
}

int64_t freeze_params(const std::vector<sdk::NamedParameter>& params, const std::vector<std::string>& patterns,
                      bool frozen) {
  int64_t flipped = 0;
  for (const auto& p : params) {
    if (!matches_any(patterns, p.name)) continue;
    at::Tensor tensor = p.tensor;
    if (tensor.requires_grad() == frozen) {
      tensor.set_requires_grad(!frozen);
      flipped += tensor.numel();
    }
    if (frozen && tensor.grad().defined()) tensor.mutable_grad().reset();
  }
  return flipped;
}

std::map<std::string, int64_t> apply_freeze_specs(const std::vector<sdk::NamedParameter>& params,
                                                  const std::vector<FreezeSpec>& specs, const ModuleAliases& aliases) {
  for (const FreezeSpec& spec : specs) check_spec(params, spec, aliases);
  std::map<std::string, int64_t> flipped;
  for (const FreezeSpec& spec : specs) {
    flipped[spec.module] += freeze_params(params, patterns_of(spec, aliases), spec.frozen);
  }
  return flipped;
}

void check_freeze_plan(const std::vector<sdk::NamedParameter>& params, const FreezePlan& plan) {
  for (const FreezeSpec& spec : plan.base) check_spec(params, spec, plan.aliases);
  for (const FreezeStage& stage : plan.schedule) {
    for (const FreezeSpec& spec : stage.specs) check_spec(params, spec, plan.aliases);
  }
}

std::vector<FreezeSpec> effective_freeze(int64_t step, const std::vector<FreezeSpec>& base,
                                         const std::vector<FreezeStage>& schedule) {
  std::vector<FreezeSpec> out;
  auto write = [&](const FreezeSpec& spec) {
    auto it = std::find_if(out.begin(), out.end(), [&](const FreezeSpec& s) { return s.module == spec.module; });
    if (it == out.end()) {
      out.push_back(spec);
    } else {
      *it = spec;
    }
  };
  for (const FreezeSpec& spec : base) write(spec);
  for (const FreezeStage& stage : schedule) {
    if (stage.start_step > step) continue;
    for (const FreezeSpec& spec : stage.specs) write(spec);
  }
  return out;
}

std::vector<FreezeSpec> effective_freeze(int64_t step, const FreezePlan& plan) {
  return effective_freeze(step, plan.base, plan.schedule);
}

bool frozen_throughout(const std::string& name, const FreezePlan& plan) {
  std::vector<int64_t> starts{0};
  for (const FreezeStage& stage : plan.schedule) starts.push_back(stage.start_step);
  return std::all_of(starts.begin(), starts.end(), [&](int64_t step) {
    bool frozen = false;
    for (const FreezeSpec& spec : effective_freeze(step, plan)) {
      if (matches_any(patterns_of(spec, plan.aliases), name)) frozen = spec.frozen;
    }
    return frozen;
  });
}

nlohmann::json canonical_freeze_meta(const std::vector<FreezeSpec>& specs) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [module, frozen] : by_module(specs)) out.push_back({{"module", module}, {"frozen", frozen}});
  return out;
}

void check_freeze_meta(const nlohmann::json& saved, const nlohmann::json& expected, bool ignore_mismatch,
                       const std::string& checkpoint) {
  if (saved.is_null()) return;
  auto read = [&](const nlohmann::json& meta, const char* what) {
    std::map<std::string, bool> out;
    try {
      for (const auto& entry : meta) out[entry.at("module").get<std::string>()] = entry.at("frozen").get<bool>();
    } catch (const nlohmann::json::exception& e) {
      throw sdk::Error(fmt::format("checkpoint {}: {} freeze state {} is not a list of {{module, frozen}}: {}",
                                   checkpoint, what, meta.dump(), e.what()));
    }
    return out;
  };
  const std::map<std::string, bool> before = read(saved, "saved");
  std::string differences;
  for (const auto& [module, frozen] : read(expected, "expected")) {
    const auto it = before.find(module);
    if (it == before.end() || it->second == frozen) continue;
    differences += fmt::format("{}'{}' is {} in the checkpoint but {} in this config", differences.empty() ? "" : "; ",
                               module, state_name(it->second), state_name(frozen));
  }
  if (differences.empty()) return;
  const std::string message = fmt::format(
      "checkpoint {}: its freeze state differs from the one this config gives at its step: {}. Make "
      "[train]/[vlm] freeze and freeze_schedule match the run that wrote it, or set [checkpoint] "
      "ignore_freeze_mismatch = true to resume anyway",
      checkpoint, differences);
  if (!ignore_mismatch) throw sdk::ConfigError(message);
  log::get().warn("{} (ignored: checkpoint.ignore_freeze_mismatch = true)", message);
}

}  // namespace kforge::train
