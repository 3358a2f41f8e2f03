// load_task: task.toml read strictly, each JSON line checked against its output type's document shape.
#include "eval_tasks/task_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>

#include "config/toml_reader.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

using config::Value;

const std::map<std::string, OutputType>& output_types() {
  static const std::map<std::string, OutputType> types = {{"multiple_choice", OutputType::MultipleChoice},
                                                          {"loglikelihood", OutputType::Loglikelihood},
                                                          {"loglikelihood_rolling", OutputType::LoglikelihoodRolling},
                                                          {"generate_until", OutputType::GenerateUntil}};
  return types;
}

/// task.toml's keys, each read once with its type checked.
class TaskToml {
 public:
  TaskToml(const Value& root, std::filesystem::path file) : root_(root), file_(std::move(file)) {
    static const std::vector<std::string> keys = {
        "name",        "version",           "output_type",      "eval_docs", "fewshot_docs", "num_fewshot",
        "description", "fewshot_delimiter", "target_delimiter", "until",     "max_gen_toks", "metrics",
        "group",       "fewshot_sampler"};
    for (const auto& [key, value] : root.table) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
        throw sdk::ConfigError(fmt::format("{}: unknown key '{}' (the keys are: {})", where(value), key,
                                           fmt::join(keys, ", ")));
      }
    }
  }

  const Value* find(const char* key, Value::Type type) const {
    const Value* v = root_.find(key);
    if (v && v->type != type) {
      throw sdk::ConfigError(fmt::format("{}: {} must be a {}, got {} {}", where(*v), key, config::type_name(type),
                                         config::type_name(v->type), v->to_toml_brief()));
    }
    return v;
  }
  std::string string(const char* key, const std::string& fallback, bool required = false) const {
    const Value* v = find(key, Value::Type::String);
    if (!v && required) throw sdk::ConfigError(fmt::format("{}: missing key '{}' (a string)", file_.string(), key));
    return v ? v->s : fallback;
  }
  int64_t integer(const char* key, int64_t fallback, bool required = false) const {
    const Value* v = find(key, Value::Type::Int);
    if (!v && required) throw sdk::ConfigError(fmt::format("{}: missing key '{}' (an integer)", file_.string(), key));
    if (v && v->i < 0) throw sdk::ConfigError(fmt::format("{}: {} must be >= 0, got {}", where(*v), key, v->i));
    return v ? v->i : fallback;
  }
  std::vector<std::string> strings(const char* key) const {
    std::vector<std::string> out;
    if (const Value* v = find(key, Value::Type::List)) {
      for (const Value& item : v->list) {
        if (item.type != Value::Type::String) {
          throw sdk::ConfigError(fmt::format("{}: {} must be a list of strings", where(*v), key));
        }
        out.push_back(item.s);
      }
    }
    return out;
  }
  std::string where(const Value& v) const { return v.source.line > 0 ? v.source.describe() : file_.string(); }
  const Value& root() const { return root_; }

 private:
  const Value& root_;
  std::filesystem::path file_;
};

std::string json_string(const nlohmann::json& doc, const char* key, const std::string& where) {
  const auto it = doc.find(key);
  if (it == doc.end() || !it->is_string()) throw sdk::ConfigError(fmt::format("{}: needs \"{}\": a string", where, key));
  return it->get<std::string>();
}

std::vector<std::string> json_strings(const nlohmann::json& doc, const char* key, const std::string& where) {
  const auto it = doc.find(key);
  bool ok = it != doc.end() && it->is_array() && !it->empty();
  if (ok) ok = std::all_of(it->begin(), it->end(), [](const nlohmann::json& s) { return s.is_string(); });
  if (!ok) throw sdk::ConfigError(fmt::format("{}: needs \"{}\": a non-empty list of strings", where, key));
  return it->get<std::vector<std::string>>();
}

/// A multiple-choice document: {"query", "choices", "gold"} or (partial scoring) {"queries", "continuation", "gold"}.
void read_multiple_choice(Doc& doc, const std::string& where) {
  if (doc.raw.contains("queries")) {
    doc.queries = json_strings(doc.raw, "queries", where);
    doc.choices = {json_string(doc.raw, "continuation", where)};
  } else {
    doc.queries = {json_string(doc.raw, "query", where)};
    doc.choices = json_strings(doc.raw, "choices", where);
    for (const std::string& choice : doc.choices) {  // acc_norm divides by its length
      if (choice.empty()) throw sdk::ConfigError(fmt::format("{}: a choice is empty", where));
    }
  }
  const auto gold = doc.raw.find("gold");
  if (gold == doc.raw.end() || !gold->is_number_integer() || gold->get<int64_t>() < 0 ||
      gold->get<int64_t>() >= static_cast<int64_t>(doc.options())) {
    throw sdk::ConfigError(
        fmt::format("{}: needs \"gold\": an integer index into its {} options", where, doc.options()));
  }
  doc.gold = gold->get<int64_t>();
}

Doc read_doc(const std::string& line, OutputType type, const std::string& where) {
  Doc doc;
  try {
    doc.raw = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    throw sdk::ConfigError(fmt::format("{}: not a JSON object: {}", where, e.what()));
  }
  if (!doc.raw.is_object()) throw sdk::ConfigError(fmt::format("{}: not a JSON object", where));
  switch (type) {
    case OutputType::MultipleChoice:
      read_multiple_choice(doc, where);
      break;
    case OutputType::Loglikelihood:
      doc.queries = {json_string(doc.raw, "query", where)};
      doc.choices = {json_string(doc.raw, "continuation", where)};
      break;
    case OutputType::LoglikelihoodRolling:
      doc.text = json_string(doc.raw, "text", where);
      doc.page = doc.raw.contains("page") ? json_string(doc.raw, "page", where) : doc.text;
      break;
    case OutputType::GenerateUntil:
      doc.queries = {json_string(doc.raw, "query", where)};
      doc.answer = json_string(doc.raw, "answer", where);
      break;
  }
  return doc;
}

std::vector<Doc> read_docs(const std::filesystem::path& file, OutputType type) {
  std::ifstream in(file);
  if (!in) throw sdk::ConfigError(fmt::format("{}: cannot open the task's documents", file.string()));
  std::vector<Doc> docs;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    docs.push_back(read_doc(line, type, fmt::format("{}:{}", file.string(), line_no)));
  }
  if (docs.empty()) throw sdk::ConfigError(fmt::format("{}: holds no documents", file.string()));
  return docs;
}

}  // namespace

const char* output_type_name(OutputType type) {
  for (const auto& [name, t] : output_types()) {
    if (t == type) return name.c_str();
  }
  return "?";
}

const std::vector<std::string>& known_metrics(OutputType type) {
  static const std::map<OutputType, std::vector<std::string>> metrics = {
      {OutputType::MultipleChoice, {"acc", "acc_norm"}},
      {OutputType::Loglikelihood, {"perplexity", "acc"}},
      {OutputType::LoglikelihoodRolling, {"word_perplexity", "byte_perplexity", "bits_per_byte", "token_perplexity"}},
      {OutputType::GenerateUntil, {"exact_match"}}};
  return metrics.at(type);
}

TaskSpec load_task(const std::filesystem::path& task_dir, const std::string& name) {
  const std::filesystem::path dir = task_dir / name;
  const std::filesystem::path file = dir / "task.toml";
  if (!std::filesystem::is_regular_file(file)) {
    throw sdk::ConfigError(fmt::format("task '{}': no {} (a task is a directory <task-dir>/<name>/ holding task.toml "
                                       "and its JSON Lines documents)",
                                       name, file.string()));
  }
  const Value root = config::read_toml_file(file);
  const TaskToml toml(root, file);
  TaskSpec t;
  t.name = toml.string("name", name);
  if (t.name != name) {
    throw sdk::ConfigError(fmt::format("{}: name = \"{}\" but the task's directory is '{}'", file.string(), t.name, name));
  }
  t.version = toml.integer("version", 0, true);
  const std::string type = toml.string("output_type", "", true);
  const auto found = output_types().find(type);
  if (found == output_types().end()) {
    throw sdk::ConfigError(fmt::format("{}: output_type = \"{}\": use multiple_choice, loglikelihood, "
                                       "loglikelihood_rolling or generate_until",
                                       file.string(), type));
  }
  t.output_type = found->second;
  t.num_fewshot = toml.integer("num_fewshot", 0);
  t.description = toml.string("description", "");
  t.fewshot_delimiter = toml.string("fewshot_delimiter", "\n\n");
  t.target_delimiter = toml.string("target_delimiter", " ");
  t.until = toml.strings("until");
  t.max_gen_toks = toml.integer("max_gen_toks", 256);
  t.group = toml.string("group", "");
  const std::string sampler = toml.string("fewshot_sampler", "default");
  if (sampler != "default" && sampler != "first_n") {
    throw sdk::ConfigError(fmt::format("{}: fewshot_sampler = \"{}\": use \"default\" (seeded random draws) or "
                                       "\"first_n\" (the first examples in file order)",
                                       file.string(), sampler));
  }
  t.first_n_fewshot = sampler == "first_n";
  t.metrics = toml.strings("metrics");
  const auto& known = known_metrics(t.output_type);
  if (t.metrics.empty()) t.metrics = known;
  for (const std::string& metric : t.metrics) {
    if (std::find(known.begin(), known.end(), metric) == known.end()) {
      throw sdk::ConfigError(fmt::format("{}: metric '{}' is not one of a {} task's: {}", file.string(), metric, type,
                                         fmt::join(known, ", ")));
    }
  }
  if (t.output_type == OutputType::LoglikelihoodRolling && t.num_fewshot > 0) {
    throw sdk::ConfigError(fmt::format("{}: num_fewshot = {}: a loglikelihood_rolling task scores whole documents "
                                       "and takes no few-shot examples",
                                       file.string(), t.num_fewshot));
  }
  if (t.output_type == OutputType::GenerateUntil && t.max_gen_toks < 1) {
    throw sdk::ConfigError(fmt::format("{}: max_gen_toks must be >= 1", file.string()));
  }
  const std::string eval_docs = toml.string("eval_docs", "", true);
  t.docs = read_docs(dir / eval_docs, t.output_type);
  const std::string fewshot = toml.string("fewshot_docs", "");
  t.separate_fewshot = !fewshot.empty() && fewshot != eval_docs;  // lm-eval: fewshot_split != test_split
  t.fewshot = t.separate_fewshot ? read_docs(dir / fewshot, t.output_type) : t.docs;
  return t;
}

}  // namespace kforge::eval_tasks
