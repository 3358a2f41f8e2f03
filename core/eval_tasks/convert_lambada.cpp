// LAMBADA's documents, mirroring lm-eval-harness v0.4.x tasks/lambada/lambada_openai.yaml: doc_to_text
// "{{text.split(' ')[:-1]|join(' ')}}", doc_to_target "{{' '+text.split(' ')[-1]}}".
#include "eval_tasks/convert_lambada.h"

#include "eval_tasks/raw_records.h"

namespace kforge::eval_tasks {
namespace {

nlohmann::json lambada_doc(const RawRecord& record) {
  const std::string text = raw_string(record, record.value, "text");
  const size_t last_space = text.rfind(' ');
  if (last_space == std::string::npos) return {{"query", ""}, {"continuation", text}};  // split(' ') gives [text]
  return {{"query", text.substr(0, last_space)}, {"continuation", text.substr(last_space + 1)}};
}

}  // namespace

ConvertedTask convert_lambada(const std::vector<std::filesystem::path>& raw) {
  return with_jsonl_docs({.name = "lambada_openai",
                          .version = 1,
                          .output_type = "loglikelihood",
                          .eval_split = "test",
                          .metrics = {"perplexity", "acc"}},
                         raw, lambada_doc);
}

}  // namespace kforge::eval_tasks
