// Writing a converted task: task.toml's keys in the task format's order, one JSON document per line in the .jsonl
// files.
#include "eval_tasks/task_writer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>

#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

namespace fs = std::filesystem;

void writer_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw sdk::Error(fmt::format("cannot write {}", path.string()));
}

// A TOML basic string: quotes, backslashes and control characters escaped (toml++'s own formatter writes "\n\n" as a
// multi-line literal whose first newline a reader trims).
std::string writer_toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
          out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string writer_task_toml(const ConvertedTask& task) {
  std::vector<std::string> metrics;
  for (const std::string& metric : task.metrics) metrics.push_back(writer_toml_string(metric));
  std::string text = "# Converted by `kforge tasks convert` (prompts as lm-eval-harness v0.4.x builds them).\n";
  text += fmt::format("name = {}\nversion = {}\noutput_type = {}\neval_docs = {}\n", writer_toml_string(task.name),
                      task.version, writer_toml_string(task.output_type),
                      writer_toml_string(task.eval_split + ".jsonl"));
  if (!task.fewshot_split.empty()) {
    text += fmt::format("fewshot_docs = {}\n", writer_toml_string(task.fewshot_split + ".jsonl"));
  }
  text += fmt::format("num_fewshot = {}\ndescription = {}\n", task.num_fewshot, writer_toml_string(task.description));
  if (task.first_n_fewshot) text += "fewshot_sampler = \"first_n\"\n";
  text += "fewshot_delimiter = \"\\n\\n\"\ntarget_delimiter = \" \"\n";
  text += fmt::format("metrics = [{}]\n", fmt::join(metrics, ", "));
  if (!task.group.empty()) text += fmt::format("group = {}\n", writer_toml_string(task.group));
  return text;
}

std::string writer_jsonl(const ConvertedTask& task, const std::string& split, const std::vector<nlohmann::json>& docs) {
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
  writer_file(dir / (task.eval_split + ".jsonl"), writer_jsonl(task, task.eval_split, task.eval_docs));
  if (!task.fewshot_split.empty()) {
    writer_file(dir / (task.fewshot_split + ".jsonl"), writer_jsonl(task, task.fewshot_split, task.fewshot_docs));
  }
  writer_file(dir / "task.toml", writer_task_toml(task));
  return dir;
}

}  // namespace kforge::eval_tasks
