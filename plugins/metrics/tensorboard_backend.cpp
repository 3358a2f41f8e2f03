// tensorboard: TensorBoard event files (rank 0's; each rank's with [metrics] per_rank) in [metrics] tensorboard_dir,
// relative to metrics.run_dir when not absolute: one Event of float32 scalars per logging step, flushed at once, and
// the resolved config as a text summary (tag "config", at the run's first step). A new file per run; before it starts,
// the directory's older event files lose their records of steps after the one this run continues from (a torn tail goes
// too), and the new file opens with a session-log START at the next step (TensorBoard's restart rule), so every step is
// there once, as stored and as shown.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "backends.h"
#include "tensorboard_events.h"
#include "tfrecord.h"

namespace kforge::builtin::metrics {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTbFilePrefix = "events.out.tfevents.";

double tb_unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string tb_read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::vector<fs::path> tb_event_files(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename().string().rfind(kTbFilePrefix, 0) == 0) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Rewrites an event file with only its records of steps <= last_step (a torn or corrupt tail goes
// too); returns how many records were dropped (a torn tail counts as one).
int64_t tb_keep_steps_up_to(const fs::path& path, int64_t last_step) {
  const TfRecords file = read_tfrecords(tb_read_bytes(path));
  std::string kept;
  int64_t dropped = file.intact ? 0 : 1;
  for (const std::string& record : file.records) {
    int64_t step = 0;
    try {
      step = event_step(record);
    } catch (const sdk::Error&) {
      step = last_step + 1;  // not an Event: nothing TensorBoard could show either
    }
    if (step <= last_step) {
      kept += tfrecord(record);
    } else {
      ++dropped;
    }
  }
  if (dropped == 0) return 0;
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << kept;
  out.close();
  if (!out)
    throw sdk::Error("metrics backend tensorboard: cannot write " + tmp.string() + " (disk full or read-only?)");
  fs::rename(tmp, path);
  return dropped;
}

// The seconds field of an event file name ("events.out.tfevents.<seconds>.<host>..."), 0 if none.
int64_t tb_file_seconds(const fs::path& path) {
  const std::string name = path.filename().string().substr(std::char_traits<char>::length(kTbFilePrefix));
  return std::atoll(name.substr(0, name.find('.')).c_str());
}

// events.out.tfevents.<seconds>.<host>.<pid>.<n>, as TensorFlow's Python writer names them, with the
// seconds past every existing file's so that TensorBoard (which reads files in name order) reads it last.
fs::path tb_new_file_name(const fs::path& dir, const std::vector<fs::path>& existing) {
  static std::atomic<int> counter{0};
  int64_t seconds = static_cast<int64_t>(tb_unix_now());
  for (const fs::path& f : existing) seconds = std::max(seconds, tb_file_seconds(f) + 1);
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  char name[512];
  std::snprintf(name, sizeof(name), "%s%010lld.%s.%d.%d", kTbFilePrefix, static_cast<long long>(seconds), host,
                static_cast<int>(::getpid()), counter++);
  return dir / name;
}

// The resolved config as Markdown: an indented (preformatted) block.
std::string tb_config_markdown(const std::string& toml) {
  std::string out;
  std::istringstream in(toml);
  for (std::string line; std::getline(in, line);) out += "    " + line + "\n";
  return out;
}

class TensorboardBackend final : public sdk::MetricBackend {
 public:
  TensorboardBackend(const fs::path& dir, const fs::path& file) : dir_(dir), out_(file, std::ios::binary) {
    if (!out_) {
      throw sdk::Error("metrics backend tensorboard: cannot create " + file.string() +
                       "; check [metrics] tensorboard_dir");
    }
  }

  void write(const std::string& event) {
    out_ << tfrecord(event);
    out_.flush();  // a crash loses nothing already logged
  }

  void log(int64_t step, const sdk::MetricList& metrics) override {
    write(scalars_event(tb_unix_now(), step, metrics));
  }

  std::string run_id() const override { return dir_.string(); }

 private:
  fs::path dir_;
  std::ofstream out_;
};

}  // namespace

std::unique_ptr<sdk::MetricBackend> make_tensorboard(const sdk::BuildContext& ctx, const sdk::RunInfo& run) {
  if (run.rank != 0 && !run.per_rank) return std::make_unique<NullBackend>();
  fs::path dir = ctx.section.get_string("tensorboard_dir");
  if (dir.is_relative()) dir = fs::path(run.run_dir) / dir;
  dir = fs::absolute(dir).lexically_normal();
  // The run this one resumes logged to resumed_run_id: continue there even if the config now says otherwise.
  if (!run.resumed_run_id.empty() && fs::path(run.resumed_run_id) != dir && fs::is_directory(run.resumed_run_id)) {
    ctx.log.info("tensorboard: continuing the resumed run's event directory " + run.resumed_run_id + " (not " +
                 dir.string() + ")");
    dir = run.resumed_run_id;
  }
  fs::create_directories(dir);
  const std::vector<fs::path> older = tb_event_files(dir);
  for (const fs::path& f : older) {
    if (const int64_t dropped = tb_keep_steps_up_to(f, run.resumed_step); dropped > 0) {
      ctx.log.info(f.string() + ": dropped " + std::to_string(dropped) + " record(s) of steps after " +
                   std::to_string(run.resumed_step) + ", where this run continues");
    }
  }
  auto backend = std::make_unique<TensorboardBackend>(dir, tb_new_file_name(dir, older));
  const double now = tb_unix_now();
  backend->write(file_version_event(now));
  if (!older.empty()) backend->write(session_start_event(now, run.resumed_step + 1));
  // At the first step it trains, so that a later resume from an earlier step drops it with the rest.
  if (!run.config_toml.empty()) {
    backend->write(text_event(now, run.resumed_step + 1, "config", tb_config_markdown(run.config_toml)));
  }
  return backend;
}

}  // namespace kforge::builtin::metrics
