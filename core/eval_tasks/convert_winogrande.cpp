// Winogrande's documents, mirroring lm-eval-harness v0.4.x tasks/winogrande/preprocess_winogrande.py: doc_to_choice
// (the partial contexts), doc_to_target (the shared continuation) and doc_to_text (the answer's index).
#include "eval_tasks/convert_winogrande.h"

#include <fmt/format.h>

#include "eval_tasks/python_text.h"
#include "eval_tasks/raw_records.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

nlohmann::json winogrande_doc(const RawRecord& record) {
  const std::string sentence = raw_string(record, record.value, "sentence");
  const size_t blank = sentence.find('_');
  if (blank == std::string::npos) {
    throw sdk::ConfigError(fmt::format("{}: the sentence has no \"_\" to fill: {}", record.where, sentence));
  }
  const std::string answer = raw_string(record, record.value, "answer");
  if (answer != "1" && answer != "2") {
    throw sdk::ConfigError(fmt::format("{}: answer \"{}\" is not \"1\" or \"2\"", record.where, answer));
  }
  const std::string before = sentence.substr(0, blank);
  const std::string option1 = raw_string(record, record.value, "option1");
  const std::string option2 = raw_string(record, record.value, "option2");
  return {{"queries", {before + option1, before + option2}},
          {"continuation", py_strip(std::string_view(sentence).substr(blank + 1))},
          {"gold", answer == "1" ? 0 : 1}};
}

}  // namespace

ConvertedTask convert_winogrande(const std::vector<std::filesystem::path>& raw) {
  return with_jsonl_docs({.name = "winogrande",
                          .version = 1,
                          .output_type = "multiple_choice",
                          .eval_split = "validation",
                          .fewshot_split = "train",
                          .metrics = {"acc"}},
                         raw, winogrande_doc);
}

}  // namespace kforge::eval_tasks
