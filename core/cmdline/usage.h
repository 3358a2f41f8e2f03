// kforge's top-level usage, and the command lines it answers alone: none, help, an unknown command. The front-end
// answers them without starting kforge-host (and loading LibTorch); kforge-host answers them the same way.
#pragma once

#include <optional>
#include <string_view>

namespace kforge::cmdline {

/// The text of `kforge --help`.
const char* usage();

/// True for a first argument kforge-host acts on: a command (run, launch, ...) or --version.
bool is_host_command(std::string_view word);

/// For a command line the usage answers, prints it and returns the exit code: no command (the usage on stderr,
/// kExitUsage), --help, -h or help alone (stdout, kExitOk), an unknown command ("kforge: unknown command 'rn'. Did you
/// mean 'run'?" and the usage on stderr, kExitUsage). Nothing for a command of kforge-host.
std::optional<int> answer_from_usage(int argc, char** argv);

}  // namespace kforge::cmdline
