// Reading benchmarks' raw files for the converters: whole text files, JSON Lines records and their typed fields,
// each error naming the file and line at fault.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// One record of a raw file and where it was read ("file:line"), for error messages.
struct RawRecord {
  nlohmann::json value;
  std::string where;
};

/// The file's bytes. Throws sdk::ConfigError naming the file when it cannot be read.
std::string read_raw_text(const std::filesystem::path& file);

/// The non-blank lines of a JSON Lines file, each a JSON object. Throws sdk::ConfigError naming the file and line of
/// one that is not, and the file when it holds no record.
std::vector<RawRecord> read_raw_jsonl(const std::filesystem::path& file);

/// record[key] as a string. Throws sdk::ConfigError naming the record's file and line when it is missing or not one.
std::string raw_string(const RawRecord& record, const nlohmann::json& object, const std::string& key);

/// record[key] as a JSON array. Throws sdk::ConfigError naming the record's file and line when it is not one.
const nlohmann::json& raw_array(const RawRecord& record, const nlohmann::json& object, const std::string& key);

/// record[key] as a list of strings. Throws sdk::ConfigError naming the record's file and line when it is not one.
std::vector<std::string> raw_strings(const RawRecord& record, const nlohmann::json& object, const std::string& key);

/// `index` (the value of record[key]) when it picks one of `count` options. Throws sdk::ConfigError naming the
/// record's file and line, the key and the value otherwise.
int64_t raw_option_index(const RawRecord& record, const std::string& key, int64_t index, size_t count);

/// record[key] as an integer: a JSON integer, or a string of decimal digits ("2"). Throws sdk::ConfigError naming the
/// record's file and line otherwise.
int64_t raw_integer(const RawRecord& record, const nlohmann::json& object, const std::string& key);

/// The documents of a JSON Lines file, `to_doc` applied to each record in file order.
std::vector<nlohmann::json> raw_jsonl_docs(const std::filesystem::path& file,
                                           const std::function<nlohmann::json(const RawRecord&)>& to_doc);

/// `task` with its eval documents read from the JSON Lines file raw[0] and, when raw holds a second file, its few-shot
/// documents from raw[1] (else no few-shot split), `to_doc` applied to each record.
ConvertedTask with_jsonl_docs(ConvertedTask task, const std::vector<std::filesystem::path>& raw,
                              const std::function<nlohmann::json(const RawRecord&)>& to_doc);

}  // namespace kforge::eval_tasks
