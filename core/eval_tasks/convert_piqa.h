// PIQA (ybisk/piqa's JSON Lines of goal, sol1, sol2 and the matching labels file, one 0 or 1 a line) to the task
// "piqa", prompts as lm-eval-harness v0.4.x's tasks/piqa/piqa.yaml builds them.
#pragma once

#include <filesystem>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// raw = {valid.jsonl, valid-labels.lst (eval, lm-eval's validation split)[, train.jsonl, train-labels.lst
/// (few-shot)]}. Each document: query = "Question: " + goal + "\nAnswer:", choices = [sol1, sol2], gold = the label.
/// Throws sdk::ConfigError naming the file and line of a record without them, a label that is not 0 or 1, or a
/// labels file whose line count is not the records'.
ConvertedTask convert_piqa(const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
