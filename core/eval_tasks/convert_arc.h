// ARC-Easy and ARC-Challenge (AI2's JSON Lines: question.stem, question.choices[{text, label}], answerKey) to the
// tasks "arc_easy" and "arc_challenge", prompts as lm-eval-harness v0.4.x's tasks/arc/arc_easy.yaml builds them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// `name` is arc_easy or arc_challenge; raw = {ARC-*-Test.jsonl (eval)[, ARC-*-Train.jsonl (few-shot)]}. Each
/// document: query = "Question: " + stem + "\nAnswer:", choices = the choices' texts, gold = the index of the choice
/// whose label is answerKey (letters or the digits "1".."4" that some questions use). Throws sdk::ConfigError naming
/// the file and line of a record without them or whose answerKey labels no choice.
ConvertedTask convert_arc(const std::string& name, const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
