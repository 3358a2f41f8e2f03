// Small authored downstream tasks of every request type, written as task directories for the tests.
#pragma once

#include <filesystem>
#include <string>

namespace kforge::test::eval_tasks {

/// Writes the tasks "choice" (multiple_choice, 1-shot from its own documents, a description; group "grp"),
/// "partial" (multiple_choice with partial scoring, 2-shot from fewshot_docs; group "grp"), "last_word"
/// (loglikelihood), "rolling" (loglikelihood_rolling, one document longer than a 32-token window) and "answer"
/// (generate_until, stop strings "\n" and " q"; 6 tokens at most) under `dir`; returns "choice,partial,...".
std::string write_tasks(const std::filesystem::path& dir);

}  // namespace kforge::test::eval_tasks
