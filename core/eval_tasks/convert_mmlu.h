// MMLU (hendrycks/test's data/ directory: dev/<subject>_dev.csv and test/<subject>_test.csv, rows of question, A, B,
// C, D, answer letter, no header) to one task per subject, "mmlu_<subject>" in the group "mmlu", with the 5-shot
// prompt lm-eval-harness v0.4.x's tasks/mmlu/default builds.
#pragma once

#include <filesystem>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// raw = {DATA_DIR}, MMLU's data/ directory. For each test/<subject>_test.csv (in name order), the task
/// mmlu_<subject>: description "The following are multiple choice questions (with answers) about <subject, _ as
/// space>.\n\n", 5 few-shot examples from dev/<subject>_dev.csv, each document query = question.strip() + "\nA. " + A
/// + "\nB. " + B + "\nC. " + C + "\nD. " + D + "\nAnswer:", choices = ["A", "B", "C", "D"], gold = the answer
/// letter's index. Throws sdk::ConfigError naming the directory without test CSVs, the subject without its dev CSV,
/// or the file and line of a row that is not six fields ending in A, B, C or D.
std::vector<ConvertedTask> convert_mmlu(const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
