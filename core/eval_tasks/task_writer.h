// Writing a converted task to disk in kforge's task format: <task-dir>/<name>/task.toml and its .jsonl documents.
#pragma once

#include <filesystem>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// Writes `task` to `task_dir`/<name>/ (created if missing; files of an earlier conversion are replaced): task.toml
/// and <eval_split>.jsonl, plus <fewshot_split>.jsonl when the task has few-shot documents. Returns the task's
/// directory. Throws sdk::Error naming the file it cannot write, or the document that is not valid UTF-8.
std::filesystem::path write_task(const std::filesystem::path& task_dir, const ConvertedTask& task);

}  // namespace kforge::eval_tasks
