// The benchmarks `kforge tasks convert --from NAME` converts: each one's raw files and its converter.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "eval_tasks/converted_task.h"

namespace kforge::eval_tasks {

struct BenchmarkConverter {
  std::string name;                 ///< --from's value, e.g. "hellaswag"
  std::string raw_files;            ///< the RAW_PATHs it takes, e.g. "hellaswag_val.jsonl [hellaswag_train.jsonl]"
  std::vector<size_t> path_counts;  ///< how many RAW_PATHs it accepts
  std::vector<ConvertedTask> (*convert)(const std::vector<std::filesystem::path>& raw);
};

/// Every benchmark, in the order `kforge tasks --help` lists them.
const std::vector<BenchmarkConverter>& benchmark_converters();

/// The tasks benchmark `name` makes of the raw files. Throws sdk::ConfigError for an unknown name (listing the known
/// ones) or a count of raw files it does not take (naming the files it takes), and the converter's errors.
std::vector<ConvertedTask> convert_benchmark(const std::string& name, const std::vector<std::filesystem::path>& raw);

}  // namespace kforge::eval_tasks
