// The fault suite's tiny training job and what it reads back (see fault_job.h).
#include "fault_job.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <regex>

#include "checkpoint/checkpoint_manager.h"
#include "support/test_host.h"
#include "support/tiny_job_toml.h"
#include "support/token_corpus.h"

namespace kforge::test {
namespace fs = std::filesystem;

FaultJob::FaultJob(const std::string& label, int world_size, int64_t steps)
    : root(temp_dir("fault_" + label)),
      checkpoints(root / "checkpoints"),
      metrics(root / "metrics"),
      world(world_size),
      max_steps(steps) {
  constexpr int kVocab = 64;
  const fs::path data = write_token_corpus(root / "data", kVocab, 6000);
  std::ofstream(root / "job.toml") << tiny_job_toml(kVocab, max_steps)
                                   << fmt::format(R"(
[data]
dataset_path = "{}"

[eval]
enabled = false

[checkpoint]
dir = "{}"
interval = 1

[metrics]
log_interval = 1
backends = ["console", "jsonl"]
run_dir = "{}"

[distributed]
dp_shard = {}
nccl_timeout_sec = 60
)",
                                                  data.string(), checkpoints.string(), metrics.string(), world);
}

std::vector<std::string> FaultJob::command(const std::vector<std::string>& overrides) const {
  std::vector<std::string> argv = {KFORGE_BIN};
  if (world > 1) {
    for (const std::string& a :
         {std::string("launch"), std::string("--nproc-per-node"), std::to_string(world), std::string("--log-dir"),
          (root / "logs").string(), std::string("--grace-sec"), std::string("2"), std::string("--")}) {
      argv.push_back(a);
    }
  }
  for (const std::string& a : {std::string("run"), (root / "job.toml").string(), std::string("--plugin-dir"),
                               std::string(KFORGE_PLUGIN_DIR)}) {
    argv.push_back(a);
  }
  argv.insert(argv.end(), overrides.begin(), overrides.end());
  return argv;
}

JobEnd FaultJob::run(const FaultEnv& env, const JobWatch& watch, const std::vector<std::string>& overrides,
                     double timeout_sec) const {
  return run_job(command(overrides), env, watch, timeout_sec);
}

FaultEnv io_fault_env(const FaultEnv& settings) {
  FaultEnv env = {{"LD_PRELOAD", KFORGE_FAULT_IO_SHIM}};
  env.insert(env.end(), settings.begin(), settings.end());
  return env;
}

std::optional<int64_t> newest_complete_step(const fs::path& checkpoints) {
  const auto all = checkpoint::CheckpointManager(checkpoints, 0, nullptr).list();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      checkpoint::CheckpointManager::load(it->second);
      return it->first;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

std::map<int64_t, double> losses_by_step(const fs::path& metrics, std::string* problem) {
  std::map<int64_t, double> out;
  std::ifstream in(metrics / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.contains("step")) {
      *problem += fmt::format("unreadable metrics line: {}\n", line);
      continue;
    }
    const int64_t step = j["step"].get<int64_t>();
    if (!j.contains("train/loss") || !j["train/loss"].is_number()) {
      *problem += fmt::format("step {} has no train/loss\n", step);
      continue;
    }
    if (out.count(step)) *problem += fmt::format("step {} is logged twice\n", step);
    out[step] = j["train/loss"].get<double>();
  }
  return out;
}

std::optional<int64_t> resumed_step(const std::string& output) {
  static const std::regex resumed("resumed from step ([0-9]+)");
  std::smatch m;
  if (std::regex_search(output, m, resumed)) return std::stoll(m[1].str());
  if (output.find("starting from scratch") != std::string::npos) return 0;
  return std::nullopt;
}

std::optional<int64_t> first_logged_step(const std::string& output) {
  static const std::regex logged(" \\[step ([0-9]+)\\] ");
  std::smatch m;
  if (std::regex_search(output, m, logged)) return std::stoll(m[1].str());
  return std::nullopt;
}

void report_fault(const std::string& text) { std::cout << "[ fault    ] " << text << std::endl; }

}  // namespace kforge::test
