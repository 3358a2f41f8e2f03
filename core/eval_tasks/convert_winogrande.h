// Winogrande (allenai/winogrande's JSON Lines: sentence with one "_", option1, option2, answer "1" or "2") to the task
// "winogrande", scored by partial evaluation as lm-eval-harness v0.4.x's tasks/winogrande builds it.
#pragma once

#include <filesystem>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// raw = {dev.jsonl (eval, lm-eval's validation split of winogrande_xl)[, train_xl.jsonl (few-shot)]}. Each
/// document: queries = the sentence up to its "_" followed by option1, and by option2; continuation = the sentence
/// after the "_", stripped; gold = answer - 1. Throws sdk::ConfigError naming the file and line of a record without
/// them, whose sentence has no "_" or whose answer is not "1" or "2".
ConvertedTask convert_winogrande(const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
