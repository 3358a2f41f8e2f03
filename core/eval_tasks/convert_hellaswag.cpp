// HellaSwag's documents, mirroring lm-eval-harness v0.4.x tasks/hellaswag (utils.preprocess, utils.process_docs).
#include "eval_tasks/convert_hellaswag.h"

#include "eval_tasks/python_text.h"
#include "eval_tasks/raw_records.h"

namespace kforge::eval_tasks {
namespace {

// re.sub("\\[.*?\\]", "", text): each '[' up to the nearest ']' on the same line removed.
std::string hellaswag_drop_brackets(std::string_view text) {
  std::string out;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t open = text.find('[', pos);
    if (open == std::string_view::npos) break;
    const size_t close = text.find_first_of("]\n", open + 1);
    if (close == std::string_view::npos || text[close] == '\n') {  // no match at this '[': keep it, look further on
      out.append(text.substr(pos, open + 1 - pos));
      pos = open + 1;
      continue;
    }
    out.append(text.substr(pos, open - pos));
    pos = close + 1;
  }
  out.append(text.substr(std::min(pos, text.size())));
  return out;
}

nlohmann::json hellaswag_doc(const RawRecord& record) {
  const nlohmann::json& raw = record.value;
  const std::string ctx_a = raw_string(record, raw, "ctx_a");
  const std::string ctx = ctx_a + " " + py_capitalize(raw_string(record, raw, "ctx_b"));
  nlohmann::json choices = nlohmann::json::array();
  for (const std::string& ending : raw_strings(record, raw, "endings")) choices.push_back(hellaswag_preprocess(ending));
  return {{"query", hellaswag_preprocess(raw_string(record, raw, "activity_label") + ": " + ctx)},
          {"choices", choices},
          {"gold", raw_option_index(record, "label", raw_integer(record, raw, "label"), choices.size())}};
}

}  // namespace

std::string hellaswag_preprocess(std::string_view text) {
  std::string out = py_replace(py_strip(text), " [title]", ". ");
  return py_replace(hellaswag_drop_brackets(out), "  ", " ");
}

ConvertedTask convert_hellaswag(const std::vector<std::filesystem::path>& raw) {
  return with_jsonl_docs({.name = "hellaswag",
                          .version = 1,
                          .output_type = "multiple_choice",
                          .eval_split = "validation",
                          .fewshot_split = "train",
                          .metrics = {"acc", "acc_norm"}},
                         raw, hellaswag_doc);
}

}  // namespace kforge::eval_tasks
