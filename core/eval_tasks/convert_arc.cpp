// ARC's documents, mirroring lm-eval-harness v0.4.x tasks/arc/arc_easy.yaml (doc_to_text "Question: {{question}}\n
// Answer:", doc_to_target "{{choices.label.index(answerKey)}}", doc_to_choice "{{choices.text}}").
#include "eval_tasks/convert_arc.h"

#include <fmt/format.h>

#include "eval_tasks/raw_records.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

nlohmann::json arc_doc(const RawRecord& record) {
  const auto question = record.value.find("question");
  if (question == record.value.end() || !question->is_object()) {
    throw sdk::ConfigError(fmt::format("{}: no \"question\" object (AI2's ARC JSON Lines hold question.stem and "
                                       "question.choices)",
                                       record.where));
  }
  const std::string answer = raw_string(record, record.value, "answerKey");
  nlohmann::json texts = nlohmann::json::array();
  int64_t gold = -1;
  for (const nlohmann::json& choice : raw_array(record, *question, "choices")) {
    if (!choice.is_object()) throw sdk::ConfigError(fmt::format("{}: a choice is not an object", record.where));
    if (raw_string(record, choice, "label") == answer && gold < 0) gold = static_cast<int64_t>(texts.size());
    texts.push_back(raw_string(record, choice, "text"));
  }
  if (gold < 0) {
    throw sdk::ConfigError(
        fmt::format("{}: answerKey \"{}\" is the label of none of its choices", record.where, answer));
  }
  return {{"query", "Question: " + raw_string(record, *question, "stem") + "\nAnswer:"},
          {"choices", texts},
          {"gold", gold}};
}

}  // namespace

ConvertedTask convert_arc(const std::string& name, const std::vector<std::filesystem::path>& raw) {
  return with_jsonl_docs({.name = name,
                          .version = 1,
                          .output_type = "multiple_choice",
                          .eval_split = "test",
                          .fewshot_split = "train",
                          .metrics = {"acc", "acc_norm"}},
                         raw, arc_doc);
}

}  // namespace kforge::eval_tasks
