// abi_fingerprint: fingerprints the SDK headers and reads/appends the recorded ones (see abi_fingerprint.h).
#include "abi_fingerprint.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "header_text.h"

namespace kforge::abi {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string hex64(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

}  // namespace

std::string fingerprint_headers(const fs::path& dir) {
  std::vector<fs::path> headers;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".h") headers.push_back(entry.path());
  }
  if (headers.empty()) throw std::runtime_error("no *.h in " + dir.string());
  std::sort(headers.begin(), headers.end());
  std::string canonical;
  for (const fs::path& header : headers) {
    try {
      canonical += "== " + header.filename().string() + "\n" + strip_comments_and_whitespace(read_text(header)) + "\n";
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(header.string() + ": " + e.what());
    }
  }
  return hex64(XXH3_64bits(canonical.data(), canonical.size()));
}

std::optional<std::string> recorded_fingerprint(const fs::path& file, uint32_t version) {
  std::istringstream lines(read_text(file));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream fields(line);
    uint32_t recorded_version = 0;
    std::string fingerprint, extra;
    if (!(fields >> recorded_version >> fingerprint) || (fields >> extra) || fingerprint.size() != 16) {
      throw std::runtime_error(file.string() + ":" + std::to_string(number) +
                               ": expected \"<abi version> <16 hex digits>\", got \"" + line + "\"");
    }
    if (recorded_version == version) return fingerprint;
  }
  return std::nullopt;
}

void record_fingerprint(const fs::path& file, uint32_t version, const std::string& fingerprint) {
  const std::optional<std::string> recorded = recorded_fingerprint(file, version);
  if (recorded == fingerprint) return;
  if (recorded) {
    throw std::runtime_error("ABI " + std::to_string(version) + " is recorded in " + file.string() + " as " +
                             *recorded + ", but the SDK headers now fingerprint as " + fingerprint +
                             ": bump KFORGE_PLUGIN_ABI_VERSION in sdk/include/kforge/sdk/abi.h and record "
                             "again (or, if ABI " +
                             std::to_string(version) + " was never released, delete its line and record again)");
  }
  std::ofstream out(file, std::ios::app);
  out << version << " " << fingerprint << "\n";
  if (!out) throw std::runtime_error("cannot append to " + file.string());
}

}  // namespace kforge::abi
