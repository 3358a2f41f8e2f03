// abi_fingerprint: the public SDK headers' fingerprint and the file that records one per plugin ABI version.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kforge::abi {

/// XXH3-64 (16 hex digits) of every *.h directly in `dir`, in file-name order, each as its name
/// and its strip_comments_and_whitespace() text. Throws std::runtime_error naming an unreadable
/// file or a header the stripper cannot read.
std::string fingerprint_headers(const std::filesystem::path& dir);

/// The fingerprint recorded for `version` in `file` (lines "<version> <fingerprint>"; '#' starts a
/// comment), or nullopt. Throws std::runtime_error naming the file and line of a malformed line.
std::optional<std::string> recorded_fingerprint(const std::filesystem::path& file, uint32_t version);

/// Appends "<version> <fingerprint>" to `file` unless that line is there. Throws
/// std::runtime_error when `version` is recorded with another fingerprint: the headers changed
/// under a version already recorded, so the version must be bumped first.
void record_fingerprint(const std::filesystem::path& file, uint32_t version, const std::string& fingerprint);

}  // namespace kforge::abi
