// A job config from what Python passes: a TOML file's path, or a dict of sections, with overrides.
#pragma once

#include <string>
#include <vector>

#include "bindings.h"
#include "config/job_config.h"

namespace kforge::python {

/// Resolves and validates `config` (str or os.PathLike: a TOML file; dict: sections of keys) with the overrides
/// ("section.key=value", "--" optional) against the process's plugins. Throws sdk::ConfigError naming the file,
/// line and key at fault, and pybind11::type_error for another type of `config`.
config::JobConfig load_job(pybind11::handle config, const std::vector<std::string>& overrides);

}  // namespace kforge::python
