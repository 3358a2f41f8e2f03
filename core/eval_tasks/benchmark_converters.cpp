// The table of benchmark converters.
#include "eval_tasks/benchmark_converters.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "eval_tasks/convert_arc.h"
#include "eval_tasks/convert_hellaswag.h"
#include "eval_tasks/convert_lambada.h"
#include "eval_tasks/convert_mmlu.h"
#include "eval_tasks/convert_piqa.h"
#include "eval_tasks/convert_wikitext.h"
#include "eval_tasks/convert_winogrande.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {

namespace fs = std::filesystem;

const std::vector<BenchmarkConverter>& benchmark_converters() {
  static const std::vector<BenchmarkConverter> converters = {
      {"hellaswag", "hellaswag_val.jsonl [hellaswag_train.jsonl]", {1, 2},
       [](const std::vector<fs::path>& raw) { return std::vector{convert_hellaswag(raw)}; }},
      {"arc_easy", "ARC-Easy-Test.jsonl [ARC-Easy-Train.jsonl]", {1, 2},
       [](const std::vector<fs::path>& raw) { return std::vector{convert_arc("arc_easy", raw)}; }},
      {"arc_challenge", "ARC-Challenge-Test.jsonl [ARC-Challenge-Train.jsonl]", {1, 2},
       [](const std::vector<fs::path>& raw) { return std::vector{convert_arc("arc_challenge", raw)}; }},
      {"mmlu", "DATA_DIR (holding dev/ and test/)", {1}, convert_mmlu},
      {"piqa", "valid.jsonl valid-labels.lst [train.jsonl train-labels.lst]", {2, 4},
       [](const std::vector<fs::path>& raw) { return std::vector{convert_piqa(raw)}; }},
      {"winogrande", "dev.jsonl [train_xl.jsonl]", {1, 2},
       [](const std::vector<fs::path>& raw) { return std::vector{convert_winogrande(raw)}; }},
      {"lambada_openai", "lambada_test.jsonl", {1},
       [](const std::vector<fs::path>& raw) { return std::vector{convert_lambada(raw)}; }},
      {"wikitext", "wiki.test.raw | wikitext_document_level test .jsonl", {1},
       [](const std::vector<fs::path>& raw) { return std::vector{convert_wikitext(raw)}; }},
  };
  return converters;
}

std::vector<ConvertedTask> convert_benchmark(const std::string& name, const std::vector<fs::path>& raw) {
  const auto& converters = benchmark_converters();
  const auto found = std::find_if(converters.begin(), converters.end(),
                                  [&](const BenchmarkConverter& c) { return c.name == name; });
  if (found == converters.end()) {
    std::vector<std::string> names;
    for (const BenchmarkConverter& c : converters) names.push_back(c.name);
    throw sdk::ConfigError(fmt::format("--from {}: not a benchmark kforge converts (these are: {})", name,
                                       fmt::join(names, ", ")));
  }
  const auto& counts = found->path_counts;
  if (std::find(counts.begin(), counts.end(), raw.size()) == counts.end()) {
    throw sdk::ConfigError(fmt::format("--from {} takes {}, got {} path{}", name, found->raw_files, raw.size(),
                                       raw.size() == 1 ? "" : "s"));
  }
  return found->convert(raw);
}

}  // namespace kforge::eval_tasks
