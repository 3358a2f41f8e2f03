// Parameter freezing (KempnerForge §9.4): [train]/[vlm] freeze lists and schedules turned into
// requires_grad flips, and the canonical freeze state a checkpoint records and checks on resume.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "kforge/sdk/optimizer.h"

namespace kforge::train {

struct FreezeSpec {
  std::string module;  ///< an alias of the plan's aliases, or an fnmatch pattern over parameter names
  bool frozen = true;
  std::string key;     ///< config key it came from ("train.freeze[0].module"), for errors
  std::string source;  ///< where that key was set ("cfg.toml:12:10"), for errors
};

struct FreezeStage {
  int64_t start_step = 0;
  std::vector<FreezeSpec> specs;
};

/// alias -> fnmatch patterns ([vlm] module_patterns).
using ModuleAliases = std::map<std::string, std::vector<std::string>>;

struct FreezePlan {
  std::vector<FreezeSpec> base;
  std::vector<FreezeStage> schedule;  ///< by start_step
  ModuleAliases aliases;

  /// Whether a stage starts at `step` (the freeze state must be re-applied there).
  bool changes_at(int64_t step) const;
};

/// The plan of a validated config: [vlm] freeze/freeze_schedule/module_patterns when [vlm] is set,
/// then [train] freeze/freeze_schedule (schedules merged by start_step, [vlm] first on ties).
FreezePlan read_freeze_plan(const config::JobConfig& job);

/// Sets requires_grad = !frozen on every parameter whose full name matches one of `patterns`
/// (fnmatch: '*' also matches '.'), only where it differs; freezing also drops the gradient.
/// Returns the number of elements flipped (0 when called again: idempotent).
int64_t freeze_params(const std::vector<sdk::NamedParameter>& params, const std::vector<std::string>& patterns,
                      bool frozen);

/// Applies `specs` in order. Returns {module: elements flipped}. Throws sdk::ConfigError naming the
/// spec's key and pattern, with the parameter-name prefixes, when a raw pattern (not an alias)
/// matches no parameter; an alias matching nothing (a module without weights) is not an error.
std::map<std::string, int64_t> apply_freeze_specs(const std::vector<sdk::NamedParameter>& params,
                                                  const std::vector<FreezeSpec>& specs, const ModuleAliases& aliases);

/// Throws as apply_freeze_specs() would for any spec of the plan (base and every stage), so a typo in
/// a late stage fails at build time. Changes nothing.
void check_freeze_plan(const std::vector<sdk::NamedParameter>& params, const FreezePlan& plan);

/// The specs in force at `step`: `base`, then every stage with start_step <= step in order; one spec per
/// module, the last write winning, in order of first appearance.
std::vector<FreezeSpec> effective_freeze(int64_t step, const std::vector<FreezeSpec>& base,
                                         const std::vector<FreezeStage>& schedule);
/// effective_freeze(step, plan.base, plan.schedule).
std::vector<FreezeSpec> effective_freeze(int64_t step, const FreezePlan& plan);

/// Whether `plan` keeps the parameter named `name` frozen at every step of a run: under the specs in force at step 0
/// and from the start of every stage (a parameter no spec matches is trainable).
bool frozen_throughout(const std::string& name, const FreezePlan& plan);

/// [{"module", "frozen"}] sorted by module, one entry per module (the last write wins): what a
/// checkpoint records, independent of the order the config lists the specs in.
nlohmann::json canonical_freeze_meta(const std::vector<FreezeSpec>& specs);

/// Compares a checkpoint's canonical freeze state with the expected one, over the modules both name.
/// On a difference throws sdk::ConfigError naming each module, the checkpoint and
/// checkpoint.ignore_freeze_mismatch, or with `ignore_mismatch` logs the same text as a warning.
/// A null `saved` (a checkpoint without freeze state) matches anything.
void check_freeze_meta(const nlohmann::json& saved, const nlohmann::json& expected, bool ignore_mismatch,
                       const std::string& checkpoint);

}  // namespace kforge::train
