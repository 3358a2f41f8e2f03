// Raw benchmark files read with their positions kept, so a converter's error names the file and line.
#include "eval_tasks/raw_records.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

bool raw_all_digits(const std::string& text) {
  return !text.empty() && text.size() < 19 &&
         std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

const nlohmann::json& raw_member(const RawRecord& record, const nlohmann::json& object, const std::string& key,
                                 const char* wanted) {
  const auto it = object.find(key);
  if (it == object.end()) throw sdk::ConfigError(fmt::format("{}: no \"{}\" ({})", record.where, key, wanted));
  return *it;
}

}  // namespace

std::string read_raw_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in || std::filesystem::is_directory(file)) {
    throw sdk::ConfigError(fmt::format("cannot read {}: not a readable file", file.string()));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<RawRecord> read_raw_jsonl(const std::filesystem::path& file) {
  std::istringstream in(read_raw_text(file));
  std::vector<RawRecord> records;
  int64_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    RawRecord record{nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false),
                     fmt::format("{}:{}", file.string(), line_no)};
    if (!record.value.is_object()) {
      throw sdk::ConfigError(fmt::format("{}: not a JSON object (is this the benchmark's JSON Lines file?)",
                                         record.where));
    }
    records.push_back(std::move(record));
  }
  if (records.empty()) throw sdk::ConfigError(fmt::format("{}: holds no records", file.string()));
  return records;
}

std::string raw_string(const RawRecord& record, const nlohmann::json& object, const std::string& key) {
  const nlohmann::json& value = raw_member(record, object, key, "a string");
  if (!value.is_string()) {
    throw sdk::ConfigError(fmt::format("{}: \"{}\" must be a string, got {}", record.where, key, value.dump()));
  }
  return value.get<std::string>();
}

const nlohmann::json& raw_array(const RawRecord& record, const nlohmann::json& object, const std::string& key) {
  const nlohmann::json& value = raw_member(record, object, key, "a list");
  if (!value.is_array()) {
    throw sdk::ConfigError(fmt::format("{}: \"{}\" must be a list, got {}", record.where, key, value.dump()));
  }
  return value;
}

std::vector<std::string> raw_strings(const RawRecord& record, const nlohmann::json& object, const std::string& key) {
  const nlohmann::json& value = raw_array(record, object, key);
  std::vector<std::string> strings;
  for (const nlohmann::json& item : value) {
    if (!item.is_string()) {
      throw sdk::ConfigError(
          fmt::format("{}: \"{}\" must be a list of strings, got {}", record.where, key, value.dump()));
    }
    strings.push_back(item.get<std::string>());
  }
  return strings;
}

int64_t raw_option_index(const RawRecord& record, const std::string& key, int64_t index, size_t count) {
  if (index < 0 || index >= static_cast<int64_t>(count)) {
    throw sdk::ConfigError(
        fmt::format("{}: \"{}\" = {} is not the index of one of its {} options", record.where, key, index, count));
  }
  return index;
}

int64_t raw_integer(const RawRecord& record, const nlohmann::json& object, const std::string& key) {
  const nlohmann::json& value = raw_member(record, object, key, "an integer");
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string() && raw_all_digits(value.get<std::string>())) return std::stoll(value.get<std::string>());
  throw sdk::ConfigError(fmt::format("{}: \"{}\" must be an integer, got {}", record.where, key, value.dump()));
}

std::vector<nlohmann::json> raw_jsonl_docs(const std::filesystem::path& file,
                                           const std::function<nlohmann::json(const RawRecord&)>& to_doc) {
  std::vector<nlohmann::json> docs;
  for (const RawRecord& record : read_raw_jsonl(file)) docs.push_back(to_doc(record));
  return docs;
}

ConvertedTask with_jsonl_docs(ConvertedTask task, const std::vector<std::filesystem::path>& raw,
                              const std::function<nlohmann::json(const RawRecord&)>& to_doc) {
  task.eval_docs = raw_jsonl_docs(raw.at(0), to_doc);
  if (raw.size() > 1) {
    task.fewshot_docs = raw_jsonl_docs(raw[1], to_doc);
  } else {
    task.fewshot_split.clear();
  }
  return task;
}

}  // namespace kforge::eval_tasks
