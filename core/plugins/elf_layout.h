// A cheap look at a plugin file's ELF layout before dlopen maps it: a truncated file would make
// the dynamic loader touch pages past its end and kill the process (SIGBUS) instead of failing.
#pragma once

#include <filesystem>
#include <string>

namespace kforge::plugins {

/// Why the ELF64 file at `path` cannot be a complete shared library (its program headers, or a
/// segment the loader maps, lie past the end of the file), or "" when the layout fits, when the file
/// is not ELF64 (dlopen explains that) or cannot be read (dlopen reports it).
std::string elf_layout_problem(const std::filesystem::path& path);

}  // namespace kforge::plugins
