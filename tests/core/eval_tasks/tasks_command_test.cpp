// `kforge tasks convert` as a user runs it: a benchmark's raw files to a task directory (task.toml and the JSON Lines
// documents), its help, and its exit codes for bad arguments and raw files.
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "support/expect_text.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

int kforge_tasks(const std::string& args, std::string* output) {
  return run_command(std::string("'") + KFORGE_BIN + "' tasks " + args + " 2>&1", output);
}

// ARC-Easy's raw test and train files, two questions and one.
fs::path arc_raw(const fs::path& dir) {
  std::ofstream(dir / "ARC-Easy-Test.jsonl")
      << R"({"id": "q1", "question": {"stem": "Which is a liquid?", "choices": [{"text": "ice", "label": "A"}, )"
      R"({"text": "water", "label": "B"}]}, "answerKey": "B"})"
      << "\n"
      << R"({"id": "q2", "question": {"stem": "Which is hot?", "choices": [{"text": "fire", "label": "1"}, )"
      R"({"text": "snow", "label": "2"}]}, "answerKey": "1"})"
      << "\n";
  std::ofstream(dir / "ARC-Easy-Train.jsonl")
      << R"({"id": "t1", "question": {"stem": "Which is a gas?", "choices": [{"text": "steam", "label": "A"}, )"
      R"({"text": "rock", "label": "B"}]}, "answerKey": "A"})"
      << "\n";
  return dir;
}

std::vector<nlohmann::json> jsonl_lines(const fs::path& file) {
  std::vector<nlohmann::json> lines;
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

TEST(TasksCommand, ConvertWritesTheTaskTomlAndItsDocuments) {
  const fs::path dir = arc_raw(temp_dir("tasks_cmd_arc"));
  const fs::path out = dir / "tasks";
  std::string output;
  ASSERT_EQ(kforge_tasks("convert --from arc_easy '" + (dir / "ARC-Easy-Test.jsonl").string() + "' '" +
                             (dir / "ARC-Easy-Train.jsonl").string() + "' --out '" + out.string() + "'",
                         &output),
            0)
      << output;
  expect_has(output, {"arc_easy: 2 documents, 1 few-shot -> " + (out / "arc_easy").string()});
  const toml::table task = toml::parse_file((out / "arc_easy" / "task.toml").string());
  EXPECT_EQ(task["name"].value<std::string>(), "arc_easy");
  EXPECT_EQ(task["version"].value<int64_t>(), 1);
  EXPECT_EQ(task["output_type"].value<std::string>(), "multiple_choice");
  EXPECT_EQ(task["eval_docs"].value<std::string>(), "test.jsonl");
  EXPECT_EQ(task["fewshot_docs"].value<std::string>(), "train.jsonl");
  EXPECT_EQ(task["num_fewshot"].value<int64_t>(), 0);
  EXPECT_EQ(task["description"].value<std::string>(), "");
  EXPECT_EQ(task["fewshot_delimiter"].value<std::string>(), "\n\n");
  EXPECT_EQ(task["target_delimiter"].value<std::string>(), " ");
  ASSERT_TRUE(task["metrics"].is_array());
  EXPECT_EQ(task["metrics"][0].value<std::string>(), "acc");
  EXPECT_EQ(task["metrics"][1].value<std::string>(), "acc_norm");
  EXPECT_FALSE(task.contains("group"));
  const auto docs = jsonl_lines(out / "arc_easy" / "test.jsonl");
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0], (nlohmann::json{{"query", "Question: Which is a liquid?\nAnswer:"},
                                     {"choices", {"ice", "water"}},
                                     {"gold", 1}}));
  EXPECT_EQ(docs[1], (nlohmann::json{{"query", "Question: Which is hot?\nAnswer:"},
                                     {"choices", {"fire", "snow"}},
                                     {"gold", 0}}));
  const nlohmann::json train_doc = {
      {"query", "Question: Which is a gas?\nAnswer:"}, {"choices", {"steam", "rock"}}, {"gold", 0}};
  EXPECT_EQ(jsonl_lines(out / "arc_easy" / "train.jsonl"), std::vector<nlohmann::json>{train_doc});
  // Converting again replaces the task's files.
  ASSERT_EQ(kforge_tasks("convert --from arc_easy '" + (dir / "ARC-Easy-Test.jsonl").string() + "' --out '" +
                             out.string() + "'",
                         &output),
            0)
      << output;
  EXPECT_EQ(jsonl_lines(out / "arc_easy" / "test.jsonl").size(), 2u);
  EXPECT_FALSE(toml::parse_file((out / "arc_easy" / "task.toml").string()).contains("fewshot_docs"));
}

TEST(TasksCommand, HelpListsTheBenchmarksAndTheirRawFiles) {
  std::string output;
  EXPECT_EQ(kforge_tasks("--help", &output), 0) << output;
  expect_has(output, {"kforge tasks", "--from", "--out", "hellaswag_val.jsonl [hellaswag_train.jsonl]",
                      "valid.jsonl valid-labels.lst", "DATA_DIR", "lambada_test.jsonl", "wiki.test.raw",
                      "Exit codes"});
}

TEST(TasksCommand, BadArgumentsAndRawFilesExit2NamingTheProblem) {
  const fs::path dir = arc_raw(temp_dir("tasks_cmd_errors"));
  std::string output;
  EXPECT_EQ(kforge_tasks("--from arc_easy x --out y", &output), 2) << output;
  expect_has(output, {"expected `kforge tasks convert`"});
  EXPECT_EQ(kforge_tasks("convert --from arc_easy '" + (dir / "ARC-Easy-Test.jsonl").string() + "'", &output), 2);
  expect_has(output, {"missing --out TASK_DIR"});
  EXPECT_EQ(kforge_tasks("convert --from hellaswag a b c --out '" + (dir / "t").string() + "'", &output), 2);
  expect_has(output, {"kforge tasks: --from hellaswag takes hellaswag_val.jsonl [hellaswag_train.jsonl], got 3 paths"});
  EXPECT_EQ(kforge_tasks("convert --from hellaswag '" + (dir / "ARC-Easy-Test.jsonl").string() + "' --out '" +
                             (dir / "t").string() + "'",
                         &output),
            2);
  expect_has(output, {"kforge tasks: " + (dir / "ARC-Easy-Test.jsonl").string() + ":1: no \"ctx_a\" (a string)"});
  EXPECT_FALSE(fs::exists(dir / "t" / "hellaswag"));
}

}  // namespace
}  // namespace kforge::test
