// PIQA's documents, mirroring lm-eval-harness v0.4.x tasks/piqa/piqa.yaml (doc_to_text "Question: {{goal}}\nAnswer:",
// doc_to_choice "{{[sol1, sol2]}}", doc_to_target label); the labels come from the separate .lst file, as the
// Hugging Face piqa loader reads them.
#include "eval_tasks/convert_piqa.h"

#include <fmt/format.h>

#include <sstream>

#include "eval_tasks/python_text.h"
#include "eval_tasks/raw_records.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

std::vector<nlohmann::json> piqa_docs(const std::filesystem::path& records_file,
                                      const std::filesystem::path& labels_file) {
  const std::vector<RawRecord> records = read_raw_jsonl(records_file);
  std::vector<std::string> labels;
  std::istringstream in(read_raw_text(labels_file));
  for (std::string line; std::getline(in, line);) {
    if (!py_strip(line).empty()) labels.push_back(py_strip(line));
  }
  if (labels.size() != records.size()) {
    throw sdk::ConfigError(fmt::format("{} holds {} labels but {} holds {} records: give each records file with its "
                                       "own labels file (valid.jsonl valid-labels.lst)",
                                       labels_file.string(), labels.size(), records_file.string(), records.size()));
  }
  std::vector<nlohmann::json> docs;
  for (size_t i = 0; i < records.size(); ++i) {
    const RawRecord& record = records[i];
    if (labels[i] != "0" && labels[i] != "1") {
      throw sdk::ConfigError(fmt::format("{}:{}: label \"{}\" is not 0 or 1", labels_file.string(), i + 1, labels[i]));
    }
    docs.push_back({{"query", "Question: " + raw_string(record, record.value, "goal") + "\nAnswer:"},
                    {"choices", {raw_string(record, record.value, "sol1"), raw_string(record, record.value, "sol2")}},
                    {"gold", labels[i] == "1" ? 1 : 0}});
  }
  return docs;
}

}  // namespace

ConvertedTask convert_piqa(const std::vector<std::filesystem::path>& raw) {
  const bool fewshot = raw.size() > 2;
  return {.name = "piqa",
          .version = 1,
          .output_type = "multiple_choice",
          .eval_split = "validation",
          .eval_docs = piqa_docs(raw.at(0), raw.at(1)),
          .fewshot_split = fewshot ? "train" : "",
          .fewshot_docs = fewshot ? piqa_docs(raw.at(2), raw.at(3)) : std::vector<nlohmann::json>{},
          .metrics = {"acc", "acc_norm"}};
}

}  // namespace kforge::eval_tasks
