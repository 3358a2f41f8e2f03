// Writing a converted task: task.toml through toml++ (which quotes and escapes its strings), one JSON document per
// line in the .jsonl files.
#include "eval_tasks/task_writer.h"

#include <fmt/format.h>

#include <toml++/toml.h>

#include <fstream>

#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

namespace fs = std::filesystem;

void write_text_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw sdk::Error(fmt::format("cannot write {}", path.string()));
}

toml::array toml_strings(const std::vector<std::string>& values) {
  toml::array array;
  for (const std::string& value : values) array.push_back(value);
  return array;
}

std::string task_toml(const ConvertedTask& task) {
  toml::table table;
  table.insert("name", task.name);
  table.insert("version", task.version);
  table.insert("output_type", task.output_type);
  table.insert("eval_docs", task.eval_split + ".jsonl");
  if (!task.fewshot_split.empty()) table.insert("fewshot_docs", task.fewshot_split + ".jsonl");
  table.insert("num_fewshot", task.num_fewshot);
  table.insert("description", task.description);
  table.insert("fewshot_delimiter", "\n\n");
  table.insert("target_delimiter", " ");
  table.insert("metrics", toml_strings(task.metrics));
  if (!task.group.empty()) table.insert("group", task.group);
  std::ostringstream text;
  text << "# Converted by `kforge tasks convert` (prompts as lm-eval-harness v0.4.x builds them).\n" << table << "\n";
  return text.str();
}

std::string jsonl_text(const ConvertedTask& task, const std::string& split, const std::vector<nlohmann::json>& docs) {
  std::string text;
  for (size_t i = 0; i < docs.size(); ++i) {
    try {
      text += docs[i].dump();
    } catch (const nlohmann::json::type_error& e) {
      throw sdk::Error(fmt::format("task {}: {} document {} is not valid UTF-8 ({}); check the raw file's encoding",
                                   task.name, split, i + 1, e.what()));
    }
    text += '\n';
  }
  return text;
}

}  // namespace

fs::path write_task(const fs::path& task_dir, const ConvertedTask& task) {
  const fs::path dir = task_dir / task.name;
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) throw sdk::Error(fmt::format("cannot create the task directory {}: {}", dir.string(), error.message()));
  write_text_file(dir / (task.eval_split + ".jsonl"), jsonl_text(task, task.eval_split, task.eval_docs));
  if (!task.fewshot_split.empty()) {
    write_text_file(dir / (task.fewshot_split + ".jsonl"), jsonl_text(task, task.fewshot_split, task.fewshot_docs));
  }
  write_text_file(dir / "task.toml", task_toml(task));
  return dir;
}

}  // namespace kforge::eval_tasks
