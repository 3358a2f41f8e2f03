// Every file format kforge writes, read back by a reader that is not kforge's: checkpoints (safetensors
// shards, metadata.json, train_state.json, config.toml), metrics.jsonl and Chrome traces, parsed by python3
// (tests/oracles/read_formats.py) and compared with what kforge held when it wrote them. (.npy shards:
// tests/core/data/prepare_data_test.cpp.)
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "checkpoint/checkpoint_manager.h"
#include "core/train/train_fixture.h"
#include "kforge/sdk/model.h"
#include "profiling/step_profiler.h"
#include "profiling/user_scope.h"
#include "support/expect_text.h"
#include "support/oracle.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "train/trainer.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

constexpr const char* kFormatsOracle = "read_formats.py";
constexpr const char* kNoOracle = "python3 with torch and numpy is required (scripts/setup.sh installs it)";

// The oracle's output: one row per line, fields split at tabs.
std::vector<std::vector<std::string>> formats_oracle_rows(const std::string& output) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> fields;
    size_t begin = 0;
    for (size_t tab; (tab = line.find('\t', begin)) != std::string::npos; begin = tab + 1) {
      fields.push_back(line.substr(begin, tab - begin));
    }
    fields.push_back(line.substr(begin));
    rows.push_back(std::move(fields));
  }
  return rows;
}

std::string formats_safetensors_dtype(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "F32";
    case at::kDouble:
      return "F64";
    case at::kBFloat16:
      return "BF16";
    case at::kHalf:
      return "F16";
    case at::kLong:
      return "I64";
    case at::kInt:
      return "I32";
    case at::kByte:
      return "U8";
    case at::kBool:
      return "BOOL";
    default:
      return c10::toString(type);
  }
}

std::string formats_joined_shape(const at::Tensor& t) {
  std::string out;
  for (const int64_t d : t.sizes()) out += (out.empty() ? "" : ",") + std::to_string(d);
  return out;
}

// Whether the bytes numpy read (dumped to `blob`) are `t`'s bytes, bit for bit.
bool formats_same_bytes(const fs::path& blob, const at::Tensor& t) {
  const at::Tensor c = t.detach().cpu().contiguous();
  const std::string bytes = read_file(blob);
  return bytes.size() == c.nbytes() && std::memcmp(bytes.data(), c.data_ptr(), bytes.size()) == 0;
}

// Keeps what every step and evaluation reported to the hooks.
class FormatsStepRecorder final : public sdk::Hook {
 public:
  std::map<int64_t, sdk::StepEvent> steps;
  std::map<int64_t, sdk::MetricList> evals;
  void on_step_end(const sdk::StepEvent& event) override { steps[event.step] = event; }
  void on_eval_end(int64_t step, const sdk::MetricList& metrics) override { evals[step] = metrics; }
};

TEST(FileFormats, SafetensorsShardHoldsTheModelAndOptimizerStateBitForBit) {
  ASSERT_TRUE(oracle_available()) << kNoOracle;
  TrainFixture fx;
  const config::JobConfig job = fx.job({"--train.max_steps=3"});
  train::Trainer trainer(job, fx.plugins->registry);
  ASSERT_EQ(trainer.train().step, 3);
  std::map<std::string, at::Tensor> expected;
  for (const auto& item : trainer.model().named_parameters(true)) expected["model/" + item.key()] = item.value();
  for (const auto& item : trainer.model().named_buffers(true)) expected["model/" + item.key()] = item.value();
  for (const auto& [key, t] : trainer.optimizer().state_dict()) expected["optimizer/" + key] = t;
  expected["rng/torch_cpu"] = at::detail::getDefaultCPUGenerator().get_state();
  ASSERT_GT(expected.size(), 10u);

  const fs::path shard = fx.checkpoint_dir / "step_3" / "shard-00000-of-00001.safetensors";
  const fs::path dump = fx.root / "numpy";
  std::string got;
  ASSERT_EQ(run_oracle(kFormatsOracle, {"safetensors", "--out", dump.string(), shard.string()}, &got), 0) << got;
  std::set<std::string> read;
  for (const auto& row : formats_oracle_rows(got)) {
    if (row[0] == "file") {
      ASSERT_EQ(row.size(), 4u) << got;
      EXPECT_EQ(row[2], std::to_string(expected.size()));
      EXPECT_EQ(row[3], R"({"format": "kforge-checkpoint"})");
      continue;
    }
    ASSERT_EQ(row.size(), 5u) << got;
    ASSERT_EQ(row[0], "tensor") << got;
    const std::string& name = row[1];
    read.insert(name);
    const auto it = expected.find(name);
    if (it == expected.end()) {
      ADD_FAILURE() << "the shard holds '" << name << "', which the model and optimizer do not";
      continue;
    }
    EXPECT_EQ(row[2], formats_safetensors_dtype(it->second.scalar_type())) << name;
    EXPECT_EQ(row[3], formats_joined_shape(it->second)) << name;
    EXPECT_TRUE(formats_same_bytes(row[4], it->second)) << name << ": numpy read other values than kforge holds";
  }
  for (const auto& [name, t] : expected) EXPECT_TRUE(read.count(name)) << name << " is missing from the shard";

  // The step directory around it: metadata.json's index against the shard, train_state.json, and
  // config.toml read by Python's tomllib.
  ASSERT_EQ(run_oracle(kFormatsOracle, {"checkpoint", shard.parent_path().string()}, &got), 0) << got;
  expect_has(got,
             {"checkpoint\t3\t" + std::to_string(3 * 4 * 16) + "\t1\t" + std::to_string(expected.size() - 1) + "\n",
              R"("max_steps": 3,)", R"("seq_len": 16,)"});
}

// The oracle is not vacuous: a shard whose offsets overlap is refused, naming the file and the fault.
TEST(FileFormats, SafetensorsReaderRefusesAShardWithAShiftedOffset) {
  ASSERT_TRUE(oracle_available()) << kNoOracle;
  checkpoint::Snapshot s;
  s.step = 1;
  s.model = {{"a", at::arange(6, at::kFloat).view({2, 3})}, {"b", at::ones({4})}};
  s.optimizer = {{"a.exp_avg", at::full({2, 3}, 0.5)}};
  s.train_state = {{"data", {{{"rank", 0}, {"epoch", 0}, {"batches_yielded", 1}}}}};
  const fs::path dir = checkpoint::CheckpointManager(temp_dir("formats-corrupt"), 0, nullptr).save(s);
  const fs::path shard = dir / "shard-00000-of-00001.safetensors";
  std::string got;
  ASSERT_EQ(run_oracle(kFormatsOracle, {"safetensors", shard.string()}, &got), 0) << got;

  // model/b's data moved 4 bytes down, into model/a's: same header length, a consistent span.
  std::string bytes = read_file(shard);
  const std::string from = R"("data_offsets":[24,40])";
  const size_t at = bytes.find(from);
  ASSERT_NE(at, std::string::npos) << bytes.substr(0, 400);
  bytes.replace(at, from.size(), R"("data_offsets":[20,36])");
  const fs::path corrupt = dir.parent_path() / "corrupt.safetensors";
  std::ofstream(corrupt, std::ios::binary) << bytes;
  EXPECT_NE(run_oracle(kFormatsOracle, {"safetensors", corrupt.string()}, &got), 0) << got;
  expect_has(got, {corrupt.string() + ": tensor 'model/b': data_offsets [20, 36] leave an overlap at byte 24"});
}

TEST(FileFormats, MetricsJsonlHoldsWhatEveryStepAndEvaluationReported) {
  ASSERT_TRUE(oracle_available()) << kNoOracle;
  TrainFixture fx;  // evaluates every 5 steps when enabled
  auto hook = std::make_shared<FormatsStepRecorder>();
  fx.run({"--train.max_steps=6", "--eval.enabled=true"}, {hook});
  ASSERT_EQ(hook->steps.size(), 6u);
  ASSERT_EQ(hook->evals.size(), 1u);
  std::string got;
  const fs::path file = fx.checkpoint_dir / "metrics.jsonl";
  ASSERT_EQ(run_oracle(kFormatsOracle, {"jsonl", file.string()}, &got), 0) << got;
  std::map<int64_t, std::map<std::string, std::string>> logged;  // step -> "\"name\"" -> value
  for (const auto& row : formats_oracle_rows(got)) {
    ASSERT_EQ(row.size(), 3u) << got;
    logged[std::stoll(row[0])][row[1]] = row[2];
  }
  auto value = [&](int64_t step, const std::string& name) {
    const auto& at_step = logged[step];
    const auto it = at_step.find('"' + name + '"');
    if (it == at_step.end()) {
      ADD_FAILURE() << "metrics.jsonl has no " << name << " at step " << step << "\n" << got;
      return std::string("missing");
    }
    return it->second;
  };
  EXPECT_EQ(logged.size(), 6u) << got;
  for (const auto& [step, event] : hook->steps) {
    EXPECT_EQ(std::stod(value(step, "train/loss")), event.loss) << "step " << step;
    EXPECT_EQ(std::stod(value(step, "train/grad_norm")), event.grad_norm) << "step " << step;
    EXPECT_EQ(std::stod(value(step, "train/lr")), event.lr) << "step " << step;
    for (const char* name : {"train/tokens_per_sec", "train/mfu", "train/step_time_sec", "memory/peak_rss_gb"}) {
      EXPECT_GT(std::stod(value(step, name)), 0.0) << name << " at step " << step;
    }
  }
  for (const auto& [step, metrics] : hook->evals) {
    for (const auto& [name, v] : metrics) EXPECT_EQ(std::stod(value(step, name)), v) << name << " at step " << step;
  }
}

// The trace of a training run: every event well formed, and the steps' user scopes in it.
TEST(FileFormats, ChromeTraceOfATrainingRunHoldsItsStepsScopes) {
  ASSERT_TRUE(oracle_available()) << kNoOracle;
  TrainFixture fx;
  const fs::path traces = fx.root / "traces";
  fx.run({"--train.max_steps=3", "--profiling.enable=true", "--profiling.start_step=1", "--profiling.end_step=3",
          "--profiling.trace_dir=" + traces.string()},
         {});
  const fs::path file = traces / "trace_steps1-3_rank0.json";
  std::string got;
  ASSERT_EQ(run_oracle(kFormatsOracle, {"trace", file.string()}, &got), 0) << got;
  std::map<std::string, int> scopes;
  int ops = 0;
  for (const auto& row : formats_oracle_rows(got)) {
    ASSERT_EQ(row.size(), 7u) << got;
    EXPECT_EQ(row[2], "X");
    EXPECT_EQ(row[5], std::to_string(::getpid()));
    if (row[1] == "user_scope") ++scopes[row[0]];
    ops += row[1] == "op" ? 1 : 0;
  }
  for (const char* scope : {"forward", "backward", "optimizer"}) EXPECT_EQ(scopes[scope], 2) << scope << "\n" << got;
  EXPECT_GT(ops, 20);
}

// Event for event, the trace holds what the recorder recorded: name, kind, times and thread.
TEST(FileFormats, ChromeTraceHoldsEveryRecordedEvent) {
  ASSERT_TRUE(oracle_available()) << kNoOracle;
  const fs::path dir = temp_dir("formats-trace");
  profiling::StepProfiler profiler(true, 0, 2, dir, 0);
  std::optional<fs::path> file;
  for (int64_t step = 0; step < 2; ++step) {
    profiler.before_step(step);
    {
      profiling::UserScope scope("forward");
      at::mm(at::ones({4, 4}), at::ones({4, 4})).sum();
    }
    file = profiler.after_step(step + 1);
  }
  ASSERT_TRUE(file.has_value());
  std::string got;
  ASSERT_EQ(run_oracle(kFormatsOracle, {"trace", file->string()}, &got), 0) << got;
  const auto rows = formats_oracle_rows(got);
  const auto events = profiler.recorder().events();
  ASSERT_GT(events.size(), 4u);
  ASSERT_EQ(rows.size(), events.size()) << got;
  for (size_t i = 0; i < events.size(); ++i) {
    const auto& e = events[i];
    const auto& row = rows[i];
    ASSERT_EQ(row.size(), 7u) << got;
    EXPECT_EQ(row[0], e.name) << i;
    EXPECT_EQ(row[1], e.user_scope ? "user_scope" : "op") << i;
    EXPECT_EQ(std::stod(row[3]), static_cast<double>(e.begin_ns) / 1e3) << i << " " << e.name;
    EXPECT_EQ(std::stod(row[4]), static_cast<double>(e.end_ns - e.begin_ns) / 1e3) << i << " " << e.name;
    EXPECT_EQ(row[6], std::to_string(e.thread)) << i;
  }
}

}  // namespace
}  // namespace kforge::test
