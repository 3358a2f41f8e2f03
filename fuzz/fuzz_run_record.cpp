// Fuzz target: a run directory as kforge report reads it (core/report/run_record). Input: metrics.jsonl (none when
// empty; a line "#@metrics.jsonl" writes an empty one); each line "#@<name>" starts another file of the directory:
// runs.jsonl, or <dir>/train_state.json, <dir>/config.toml or <dir>/metadata.json for a folder <dir> of letters,
// digits and '_' (step_N is a checkpoint); "#@<dir>/" makes the folder alone. Other names are dropped: the harness
// writes inside its scratch run directory only.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "input_sections.h"
#include "kforge/sdk/error.h"
#include "report/run_record.h"
#include "scratch_file.h"

namespace {

// Where `name` goes inside the run directory; empty when the harness does not write it.
std::filesystem::path run_record_file(const std::string& name) {
  if (name == "metrics.jsonl" || name == "runs.jsonl") return name;
  const size_t slash = name.find('/');
  if (slash == 0 || slash == std::string::npos || slash > 40) return {};
  for (size_t i = 0; i < slash; ++i) {
    const char c = name[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return {};
  }
  const std::string file = name.substr(slash + 1);
  if (file.empty() || file == "train_state.json" || file == "config.toml" || file == "metadata.json") return name;
  return {};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path run = kforge::fuzz::scratch_dir() / "run";
  std::filesystem::remove_all(run);
  std::filesystem::create_directories(run);
  const auto sections = kforge::fuzz::input_sections({reinterpret_cast<const char*>(data), size}, "metrics.jsonl");
  for (const auto& section : sections) {
    const std::filesystem::path file = run_record_file(section.name);
    if (file.empty() || (&section == &sections.front() && section.text.empty())) continue;
    std::filesystem::create_directories((run / file).parent_path());
    if (file.has_filename()) {
      kforge::fuzz::write_bytes(run / file, reinterpret_cast<const uint8_t*>(section.text.data()), section.text.size());
    }
  }
  try {
    const kforge::report::RunRecord record = kforge::report::read_run_record(run);
    for (const std::string& name : kforge::report::metric_names(record)) kforge::report::metric_series(record, name);
  } catch (const kforge::sdk::Error&) {
    // A directory that is no run is the documented refusal; any other exception escapes as a finding.
  }
  return 0;
}
