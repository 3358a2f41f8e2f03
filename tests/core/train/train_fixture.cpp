#include "core/train/train_fixture.h"

#include <fmt/format.h>

#include <csignal>

#include "data/npy_writer.h"
#include "support/test_host.h"
#include "support/tiny_job_toml.h"

namespace kforge::test {

void RecordingHook::on_train_begin(int64_t start_step) { events.push_back(fmt::format("begin {}", start_step)); }

void RecordingHook::on_step_end(const sdk::StepEvent& event) {
  losses[event.step] = event.loss;
  events.push_back(fmt::format("step {}", event.step));
  if (event.step == signal_at) std::raise(signal);
  if (event.step == stop_at) throw sdk::StopTraining("test asked to stop");
}

void RecordingHook::on_eval_end(int64_t step, const sdk::MetricList& metrics) {
  events.push_back(fmt::format("eval {} {}", step, metrics.front().first));
}

void RecordingHook::on_checkpoint_save(int64_t step, const std::string&) { events.push_back(fmt::format("save {}", step)); }

void RecordingHook::on_train_end(int64_t step, int64_t tokens_seen) {
  events.push_back(fmt::format("end {} {}", step, tokens_seen));
}

TrainFixture::TrainFixture() {
  root = temp_dir("train");
  data_dir = root / "data";
  checkpoint_dir = root / "checkpoints";
  std::filesystem::create_directories(data_dir / "eval");
  constexpr int kVocab = 64;
  for (int shard = 0; shard < 2; ++shard) {
    std::vector<int> tokens(3000);
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int>((i * 7 + shard) % kVocab);
    data::write_npy_tokens(data_dir / fmt::format("shard_{}.npy", shard), data::TokenDtype::uint16, tokens);
  }
  std::vector<int> eval(600);
  for (size_t i = 0; i < eval.size(); ++i) eval[i] = static_cast<int>((i * 7 + 3) % kVocab);
  data::write_npy_tokens(data_dir / "eval" / "eval_0.npy", data::TokenDtype::uint16, eval);
  plugins = load_builtin_plugins();
  toml = tiny_job_toml(kVocab, 20) +
         fmt::format(R"(
[data]
dataset_path = "{}"

[eval]
dataset_path = "{}"
interval = 5
steps = 2
)",
                     data_dir.string(), (data_dir / "eval").string()) +
         output_toml();
}

std::string TrainFixture::output_toml() const {
  return fmt::format(R"(
[checkpoint]
dir = "{}"
interval = 5

[metrics]
log_interval = 1
backends = ["jsonl"]
peak_tflops = 1.0
)",
                     checkpoint_dir.string());
}

config::JobConfig TrainFixture::job(const std::vector<std::string>& overrides) const {
  return job_from_toml(toml, plugins->registry, overrides);
}

train::TrainingResult TrainFixture::run(const std::vector<std::string>& overrides,
                                        std::vector<std::shared_ptr<sdk::Hook>> hooks, train::StepFn step_fn) const {
  const config::JobConfig j = job(overrides);
  return train::run_training(j, plugins->registry, train::TrainingOptions{std::move(step_fn), std::move(hooks)});
}

}  // namespace kforge::test
