// HellaSwag (rowanz/hellaswag's JSON Lines: ctx_a, ctx_b, activity_label, endings, label) to the task "hellaswag",
// prompts as lm-eval-harness v0.4.x's tasks/hellaswag/utils.py builds them.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// lm-eval's preprocess(): strip, " [title]" to ". ", every "[...]" (within a line) removed, "  " to " ".
std::string hellaswag_preprocess(std::string_view text);

/// raw = {hellaswag_val.jsonl (the eval documents, lm-eval's validation split)[, hellaswag_train.jsonl (few-shot)]}.
/// Each document: query = preprocess(activity_label + ": " + ctx_a + " " + ctx_b.capitalize()), choices = the
/// preprocessed endings, gold = label. Throws sdk::ConfigError naming the file and line of a record without them.
ConvertedTask convert_hellaswag(const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
