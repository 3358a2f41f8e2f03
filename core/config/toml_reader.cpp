#include "config/toml_reader.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "config/dotted_key_scan.h"
#include "config/limits.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

Source source_of(const toml::node& node, const std::string& origin) {
  const auto& begin = node.source().begin;
  return Source{origin, static_cast<int>(begin.line), static_cast<int>(begin.column)};
}

// `depth` counts the tables and arrays above `node`; the limit keeps the recursion (and the Value
// tree's destructor) off the end of the stack.
Value convert(const toml::node& node, const std::string& origin, int depth) {
  const Source src = source_of(node, origin);
  if ((node.is_table() || node.is_array()) && depth >= kMaxConfigDepth) {
    throw sdk::ConfigError(
        fmt::format("{}: tables and arrays nested more than {} levels deep; a kforge config "
                    "nests a few ([section.sub] key = [..]): flatten it",
                    src.describe(), kMaxConfigDepth));
  }
  if (const auto* t = node.as_table()) {
    Value out = Value::make_table(src);
    out.table.reserve(t->size());
    // A TOML table's keys are unique, so each child is appended without a lookup (linear time).
    for (const auto& [key, child] : *t)
      out.table.emplace_back(std::string(key.str()), convert(child, origin, depth + 1));
    return out;
  }
  if (const auto* a = node.as_array()) {
    Value out = Value::make_list({}, src);
    out.list.reserve(a->size());
    for (const auto& child : *a) out.list.push_back(convert(child, origin, depth + 1));
    return out;
  }
  if (const auto* v = node.as_string()) return Value::string(v->get(), src);
  if (const auto* v = node.as_integer()) return Value::integer(v->get(), src);
  if (const auto* v = node.as_floating_point()) return Value::floating(v->get(), src);
  if (const auto* v = node.as_boolean()) return Value::boolean(v->get(), src);
  // Dates and times have no meaning in a kforge config (no key takes one).
  throw sdk::ConfigError(fmt::format("{}: a TOML date/time is not a valid config value (no key takes one; quote "
                                     "it to make a string)",
                                     src.describe()));
}

Value parse(const std::string& text, const std::string& origin) {
  // toml++ recurses once per part of a dotted key or [table] header: refuse deep ones before it parses.
  const DottedRun run = longest_dotted_run(text, kMaxConfigDepth);
  if (run.parts > static_cast<size_t>(kMaxConfigDepth)) {
    throw sdk::ConfigError(
        fmt::format("{}:{}:{}: a dotted key or [table] header of more than {} parts; a kforge "
                    "config nests a few levels ([section.sub] key): shorten it",
                    origin, run.line, run.column, kMaxConfigDepth));
  }
  try {
    return convert(toml::parse(text, origin), origin, 0);
  } catch (const toml::parse_error& e) {
    const auto& begin = e.source().begin;
    throw sdk::ConfigError(fmt::format("{}:{}:{}: malformed TOML: {}", origin, begin.line, begin.column,
                                       e.description()));
  }
}

[[noreturn]] void fail_read(const std::filesystem::path& path, const std::string& why) {
  throw sdk::ConfigError(fmt::format("cannot read config file '{}': {}", path.string(), why));
}

// The file's text: a regular file or a pipe (<(...)) of at most kMaxConfigBytes, never a directory.
std::string read_config_text(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  // No such file, a symlink loop, a path component that is not a directory...
  if (ec) fail_read(path, ec == std::errc::no_such_file_or_directory ? "no such file" : ec.message());
  if (std::filesystem::is_directory(status)) fail_read(path, "it is a directory; give the path of a .toml file");
  const std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) fail_read(path, std::strerror(errno));
  std::string text;
  char buffer[1 << 16];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0) {
    text.append(buffer, n);
    if (text.size() > kMaxConfigBytes) {
      fail_read(path, fmt::format("it is larger than {} MiB, the most a config may be (a config is a few KB: is "
                                  "this the right file?)",
                                  kMaxConfigBytes >> 20));
    }
  }
  if (std::ferror(file.get())) fail_read(path, std::strerror(errno));
  return text;
}

}  // namespace

Value read_toml_file(const std::filesystem::path& path) {
  Value root = parse(read_config_text(path), path.string());
  if (root.table.empty()) {
    throw sdk::ConfigError(fmt::format(
        "config file '{}' sets nothing (it is empty, or only whitespace and comments): refused in case it is the "
        "wrong or a truncated file, since it would train the all-defaults model. Put your keys in it; to run on "
        "every default on purpose, give it a section header with no keys under it, such as [train]",
        path.string()));
  }
  return root;
}

Value read_toml_string(const std::string& text, const std::string& origin) { return parse(text, origin); }

}  // namespace kforge::config
