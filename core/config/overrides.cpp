// Command-line overrides: which arguments are overrides, their values, and their place in the tree.
#include "config/overrides.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "config/limits.h"
#include "config/toml_reader.h"
#include "kforge/sdk/error.h"

namespace kforge::config {
namespace {

const Source kCommandLine{"command line", 0, 0};

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

void mark_command_line(Value& v) {
  v.source = kCommandLine;
  for (auto& item : v.list) mark_command_line(item);
  for (auto& [k, child] : v.table) mark_command_line(child);
}

// Python literals inside a list, tuple or dict, translated to TOML: True/False, (..) -> [..],
// {'k': v} -> {'k' = v}.
std::string pythonic_to_toml(std::string_view text) {
  std::string out;
  std::string word;
  auto flush = [&] {
    if (word == "True") out += "true";
    else if (word == "False") out += "false";
    else out += word;
    word.clear();
  };
  char quote = 0;
  for (char c : text) {
    if (quote) {
      out += c;
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      flush();
      quote = c;
      out += c;
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      word += c;
    } else {
      flush();
      out += c == '(' ? '[' : c == ')' ? ']' : c == ':' ? '=' : c;
    }
  }
  flush();
  return out;
}

// "-x", "--x": an option rather than a value (negative numbers such as "-1" and "-.5" are values).
bool is_flag(std::string_view arg) {
  return arg.size() >= 2 && arg[0] == '-' && !std::isdigit(static_cast<unsigned char>(arg[1])) && arg[1] != '.';
}

}  // namespace

SplitArguments split_overrides(int argc, char** argv) {
  SplitArguments out;
  if (argc > 0) out.rest.push_back(argv[0]);
  for (int k = 1; k < argc; ++k) {
    const std::string_view arg = argv[k];
    if (!is_override(arg)) {
      out.rest.push_back(argv[k]);
    } else if (arg.find('=') == arg.npos && k + 1 < argc && !is_flag(argv[k + 1])) {
      out.overrides.push_back(std::string(arg) + "=" + argv[++k]);
    } else {
      out.overrides.emplace_back(arg);
    }
  }
  return out;
}

bool is_override(std::string_view arg) {
  if (arg.size() < 4 || arg.substr(0, 2) != "--") return false;
  const auto key = arg.substr(2, arg.find('=') == std::string_view::npos ? arg.npos : arg.find('=') - 2);
  return key.find('.') != std::string_view::npos && key.front() != '.' && key.back() != '.';
}

Value parse_override_value(std::string_view text) {
  // Python's literal: only None is null ("none" and "null" are strings, as KempnerForge reads them).
  if (text == "None") return Value::null(kCommandLine);
  const std::string l = lower(text);
  if (l == "true" || l == "false") {
    Value v = Value::boolean(l == "true", kCommandLine);
    v.s = std::string(text);
    return v;
  }
  if (!text.empty()) {
    std::string literal(text);
    const char first = text.front();
    if (first == '[' || first == '(' || first == '{') literal = pythonic_to_toml(text);
    if (first == '\'' && text.back() == '\'' && text.size() >= 2) {
      return Value::string(std::string(text.substr(1, text.size() - 2)), kCommandLine);
    }
    try {
      Value doc = read_toml_string("v = " + literal, "command line");
      Value v = *doc.find("v");
      mark_command_line(v);
      // A quoted string is its content; anything else (numbers, bools, dates) also keeps its
      // literal text, for keys whose type is string ("--checkpoint.dir=2024-01-01").
      if (v.type == Value::Type::String && first == '"') return v;
      if (v.type == Value::Type::String) return Value::string(std::string(text), kCommandLine);
      v.s = std::string(text);
      return v;
    } catch (const sdk::ConfigError&) {
      // Not a literal: a bare word such as a name or a path.
    }
  }
  return Value::string(std::string(text), kCommandLine);
}

void apply_override(Value& root, std::string_view arg) {
  if (!is_override(arg)) {
    throw sdk::ConfigError(fmt::format("'{}' is not a config override; write --section.key=value", arg));
  }
  const auto eq = arg.find('=');
  const std::string path(arg.substr(2, eq == arg.npos ? arg.npos : eq - 2));
  if (std::count(path.begin(), path.end(), '.') >= kMaxConfigDepth) {
    throw sdk::ConfigError(
        fmt::format("'{:.80}...': a key of more than {} parts; a kforge key is --section.key or "
                    "--section.sub.key",
                    arg, kMaxConfigDepth));
  }
  Value value = eq == arg.npos ? Value::boolean(true, kCommandLine) : parse_override_value(arg.substr(eq + 1));
  Value* node = &root;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == path.npos ? path.npos : dot - start);
    if (part.empty()) throw sdk::ConfigError(fmt::format("'{}': empty key in '{}'", arg, path));
    if (dot == path.npos) {
      node->set(part, std::move(value));
      return;
    }
    Value* child = node->find(part);
    if (child == nullptr || !child->is_table()) child = &node->set(part, Value::make_table(kCommandLine));
    node = child;
    start = dot + 1;
  }
}

}  // namespace kforge::config
