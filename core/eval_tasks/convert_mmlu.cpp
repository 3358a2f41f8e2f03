// MMLU's documents, mirroring lm-eval-harness v0.4.x tasks/mmlu/default (_default_template_yaml's doc_to_text and
// doc_to_choice, each subject's description; fewshot_split dev), from the CSV files the Hugging Face cais/mmlu
// dataset was built from.
#include "eval_tasks/convert_mmlu.h"

#include <fmt/format.h>

#include <algorithm>

#include "eval_tasks/csv_rows.h"
#include "eval_tasks/python_text.h"
#include "eval_tasks/raw_records.h"
#include "kforge/sdk/error.h"

namespace kforge::eval_tasks {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMmluTestSuffix = "_test.csv";

std::vector<nlohmann::json> mmlu_docs(const fs::path& file) {
  std::vector<nlohmann::json> docs;
  for (const CsvRow& row : csv_rows(read_raw_text(file), file.string())) {
    const std::string where = fmt::format("{}:{}", file.string(), row.line);
    if (row.fields.size() != 6) {
      throw sdk::ConfigError(fmt::format("{}: a row has {} fields; MMLU's rows are question,A,B,C,D,answer", where,
                                         row.fields.size()));
    }
    const std::string& answer = row.fields[5];
    if (answer.size() != 1 || answer[0] < 'A' || answer[0] > 'D') {
      throw sdk::ConfigError(fmt::format("{}: the answer \"{}\" is not A, B, C or D", where, answer));
    }
    const auto& f = row.fields;
    docs.push_back({{"query", fmt::format("{}\nA. {}\nB. {}\nC. {}\nD. {}\nAnswer:", py_strip(f[0]), f[1], f[2], f[3],
                                          f[4])},
                    {"choices", {"A", "B", "C", "D"}},
                    {"gold", answer[0] - 'A'}});
  }
  if (docs.empty()) throw sdk::ConfigError(fmt::format("{}: holds no questions", file.string()));
  return docs;
}

ConvertedTask mmlu_subject(const fs::path& data_dir, const std::string& subject) {
  const fs::path dev = data_dir / "dev" / (subject + "_dev.csv");
  if (!fs::is_regular_file(dev)) {
    throw sdk::ConfigError(fmt::format("MMLU subject {}: no {} for its 5 few-shot examples", subject, dev.string()));
  }
  return {.name = "mmlu_" + subject,
          .version = 1,
          .output_type = "multiple_choice",
          .eval_split = "test",
          .eval_docs = mmlu_docs(data_dir / "test" / (subject + kMmluTestSuffix)),
          .fewshot_split = "dev",
          .fewshot_docs = mmlu_docs(dev),
          .num_fewshot = 5,
          .first_n_fewshot = true,  // lm-eval's mmlu _default_template_yaml: fewshot_config sampler first_n
          .description = fmt::format("The following are multiple choice questions (with answers) about {}.\n\n",
                                     py_replace(subject, "_", " ")),
          .metrics = {"acc"},
          .group = "mmlu"};
}

}  // namespace

std::vector<ConvertedTask> convert_mmlu(const std::vector<fs::path>& raw) {
  const fs::path& data_dir = raw.at(0);
  std::vector<std::string> subjects;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(data_dir / "test", error)) {
    const std::string file = entry.path().filename().string();
    const size_t suffix = std::string(kMmluTestSuffix).size();
    if (file.size() > suffix && file.compare(file.size() - suffix, suffix, kMmluTestSuffix) == 0) {
      subjects.push_back(file.substr(0, file.size() - suffix));
    }
  }
  if (subjects.empty()) {
    throw sdk::ConfigError(fmt::format("{}: no test/<subject>_test.csv files; give MMLU's data/ directory (it holds "
                                       "dev/ and test/)",
                                       data_dir.string()));
  }
  std::sort(subjects.begin(), subjects.end());
  std::vector<ConvertedTask> tasks;
  for (const std::string& subject : subjects) tasks.push_back(mmlu_subject(data_dir, subject));
  return tasks;
}

}  // namespace kforge::eval_tasks
