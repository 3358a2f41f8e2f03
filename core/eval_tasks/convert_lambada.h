// LAMBADA (OpenAI's lambada_test.jsonl, one {"text"} a line, as lm-eval-harness's lambada_openai reads it) to the
// task "lambada_openai": the last word's log-likelihood given the rest, and whether it is the greedy continuation.
#pragma once

#include <filesystem>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

/// raw = {lambada_test.jsonl}. Each document: query = the text before its last space, continuation = the word after
/// it (the task's target_delimiter " " goes between them, as lm-eval's target "{{' '+text.split(' ')[-1]}}" puts a
/// space before the word). Throws sdk::ConfigError naming the file and line of a record without "text".
ConvertedTask convert_lambada(const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
