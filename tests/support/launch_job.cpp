#include "launch_job.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cmath>
#include <cstdio>
#include <fstream>

#include "support/test_host.h"

namespace kforge::test {
namespace fs = std::filesystem;

std::vector<std::string> replicated_over(int n) {
  return {fmt::format("--distributed.dp_replicate={}", n), "--distributed.dp_shard=1"};
}

std::string launch_command(const TrainFixture& fx, int nproc, const std::vector<std::string>& overrides) {
  const fs::path config = fx.root / "job.toml";
  std::ofstream(config) << fx.toml;
  std::string command = fmt::format("{} launch --nproc-per-node {} --log-dir {} --grace-sec 5 -- run {}", KFORGE_BIN,
                                    nproc, (fx.root / "logs").string(), config.string());
  for (const auto& o : overrides) command += " " + o;
  return command;
}

int launch(const TrainFixture& fx, int nproc, const std::vector<std::string>& overrides, std::string* output) {
  std::string text;
  const int code = run_command(launch_command(fx, nproc, overrides), &text);
  if (output) *output = text;
  if (code != 0 && !output) ADD_FAILURE() << "kforge launch exited with " << code << ":\n" << text;
  return code;
}

int signal_after_checkpoint(const std::string& command, const std::string& pid_format, int signal, std::string& output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed");
  int pid = -1;
  char line[4096];
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    output += line;
    std::sscanf(line, pid_format.c_str(), &pid);
    // Rank 0 reports a checkpoint once it is committed on every rank (the save is collective).
    if (pid > 0 && std::string(line).find("checkpoint saved:") != std::string::npos) {
      ::kill(pid, signal);
      pid = 0;
    }
  }
  if (pid != 0) {
    output += pid < 0 ? "[test] no line matched '" + pid_format + "': no signal was sent\n"
                      : "[test] no 'checkpoint saved:' line: no signal was sent\n";
  }
  return pclose(pipe);
}

int launch_and_kill_after_checkpoint(const TrainFixture& fx, int nproc, const std::vector<std::string>& overrides,
                                     int victim, std::string& output) {
  return signal_after_checkpoint(launch_command(fx, nproc, overrides),
                                 fmt::format("kforge launch: rank {} is pid %d", victim), SIGKILL, output);
}

std::map<int64_t, double> metric(const TrainFixture& fx, const std::string& key) {
  return metric(fx.checkpoint_dir / "metrics.jsonl", key);
}

std::map<int64_t, double> metric(const std::filesystem::path& metrics_jsonl, const std::string& key) {
  std::map<int64_t, double> out;
  std::ifstream in(metrics_jsonl);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line);
    if (j.contains(key) && j[key].is_number()) out[j["step"].get<int64_t>()] = j[key].get<double>();
  }
  return out;
}

void expect_close(const std::map<int64_t, double>& a, const std::map<int64_t, double>& b, int64_t from, int64_t to,
                  double tolerance) {
  for (int64_t step = from; step <= to; ++step) {
    ASSERT_TRUE(a.count(step) && b.count(step)) << "step " << step;
    EXPECT_NEAR(a.at(step), b.at(step), tolerance * std::max(1.0, std::abs(b.at(step)))) << "step " << step;
  }
}

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(std::ifstream(path)); }

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

void expect_parity(const TrainFixture& parallel, const TrainFixture& one, int64_t from, int64_t to) {
  expect_close(metric(parallel, "train/loss"), metric(one, "train/loss"), from, to);
  expect_close(metric(parallel, "train/grad_norm"), metric(one, "train/grad_norm"), from, to);
}

}  // namespace kforge::test
