// The CLI reference page (docs/reference/cli.md), written from the commands' option tables.
#pragma once

#include <string>

namespace kforge::cli {

/// Markdown: kforge's usage, then for every command of command_tables() its usage line, its description and a
/// table of its options (names, value, default, description), as `kforge COMMAND --help` shows them.
std::string cli_reference_markdown();

}  // namespace kforge::cli
