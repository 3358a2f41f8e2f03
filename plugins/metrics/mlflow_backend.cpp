// mlflow: an MLflow file store (rank 0's; each rank's with [metrics] per_rank) that `mlflow ui --backend-store-uri DIR`
// shows: <mlflow_dir>/<experiment id>/<run id>/{meta.yaml, params/, metrics/, tags/}, with mlflow_dir relative to the
// current directory (as MLflow's own ./mlruns), the experiment found or created by name. Params are the resolved
// config's keys ("model.dim"); metrics/<name> gets "<unix ms> <value> <step>" lines, written at once; the run's status
// is RUNNING until end() sets FINISHED, FAILED or KILLED. A resumed run reopens the run it continues (run_id() is the
// MLflow run id), drops its metric lines of later steps, and appends.
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "backends.h"
#include "config_params.h"

namespace kforge::builtin::metrics {
namespace {

namespace fs = std::filesystem;

// RunStatus as MLflow stores it in meta.yaml.
enum MlflowStatus { kRunning = 1, kFinished = 3, kFailed = 4, kKilled = 5 };
constexpr int kSourceTypeLocal = 4;  // SourceType.LOCAL

int64_t ml_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string ml_read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void ml_write(const fs::path& path, const std::string& text) {
  // Per process: with [metrics] per_rank, several ranks may write the same experiment file at once.
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) throw sdk::Error("metrics backend mlflow: cannot write " + tmp.string() + " (disk full or read-only?)");
  fs::rename(tmp, path);
}

// A single-quoted YAML scalar ('' stands for ').
std::string ml_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The value of a top-level "key: value" line of a meta.yaml, unquoted ("" when absent or null).
std::string ml_yaml_field(const std::string& yaml, const std::string& key) {
  std::istringstream in(yaml);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ": ", 0) != 0) continue;
    std::string value = line.substr(key.size() + 2);
    if (value == "null") return "";
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') {
      std::string out;
      for (size_t i = 1; i + 1 < value.size(); ++i) {
        out += value[i];
        if (value[i] == '\'') ++i;  // '' -> '
      }
      return out;
    }
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') return value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

std::string ml_random_hex(size_t digits) {
  std::random_device device;
  std::string out;
  while (out.size() < digits) {
    char buf[9];
    std::snprintf(buf, sizeof(buf), "%08x", static_cast<unsigned>(device()));
    out += buf;
  }
  return out.substr(0, digits);
}

std::string ml_user() {
  if (const char* user = std::getenv("USER"); user != nullptr && *user != '\0') return user;
  if (const passwd* pw = ::getpwuid(::getuid()); pw != nullptr) return pw->pw_name;
  return "unknown";
}

std::string ml_file_uri(const fs::path& path) { return "file://" + path.string(); }

// The experiment directories of a store (MLflow's own folders excepted).
std::vector<fs::path> ml_experiments(const fs::path& store) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(store)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name != ".trash" && name != "models" && fs::exists(entry.path() / "meta.yaml")) {
      out.push_back(entry.path());
    }
  }
  return out;
}

std::string ml_experiment_meta(const fs::path& store, const std::string& id, const std::string& name) {
  const std::string now = std::to_string(ml_now_ms());
  return "artifact_location: " + ml_file_uri(store / id) + "\ncreation_time: " + now +
         "\nexperiment_id: " + ml_quote(id) + "\nlast_update_time: " + now +
         "\nlifecycle_stage: active\nname: " + ml_quote(name) + "\n";
}

// The id of the experiment named `name`, created (with MLflow's "Default" experiment 0 in a new store).
std::string ml_experiment_id(const fs::path& store, const std::string& name) {
  if (!fs::exists(store)) {
    fs::create_directories(store / "0");
    fs::create_directories(store / ".trash");
    ml_write(store / "0" / "meta.yaml", ml_experiment_meta(store, "0", "Default"));
  }
  for (const fs::path& dir : ml_experiments(store)) {
    const std::string meta = ml_read(dir / "meta.yaml");
    if (ml_yaml_field(meta, "name") == name && ml_yaml_field(meta, "lifecycle_stage") != "deleted") {
      return ml_yaml_field(meta, "experiment_id");
    }
  }
  // MLflow's file store numbers new experiments with an 18-digit-or-so integer; this one comes from the
  // name (FNV-1a), so ranks creating the same experiment at once (per_rank) agree on it.
  uint64_t hash = 14695981039346656037ull;
  for (const unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  const std::string id = std::to_string(100000000000000000ull + hash % 800000000000000000ull);
  fs::create_directories(store / id);
  ml_write(store / id / "meta.yaml", ml_experiment_meta(store, id, name));
  return id;
}

// An MLflow metric key for a kforge metric name: characters MLflow refuses (it allows letters, digits,
// _ - . space : /) become '_', and so do empty, "." and ".." path parts.
std::string ml_metric_key(const std::string& name) {
  std::string out, part;
  const auto close_part = [&] {
    out += part.empty() || part == "." || part == ".." ? std::string("_") : part;
    part.clear();
  };
  for (const char c : name) {
    if (c == '/') {
      close_part();
      out += '/';
    } else {
      const bool ok = std::isalnum(static_cast<unsigned char>(c)) != 0 ||
                      std::string_view("_-. :").find(c) != std::string_view::npos;
      part += ok ? c : '_';
    }
  }
  close_part();
  return out;
}

// Rewrites a metric file with only its lines of steps <= last_step; returns how many were dropped.
int64_t ml_keep_steps_up_to(const fs::path& path, int64_t last_step) {
  std::istringstream in(ml_read(path));
  std::string kept;
  int64_t dropped = 0;
  for (std::string line; std::getline(in, line);) {
    long long ts = 0, step = 0;
    double value = 0;
    char tail = 0;
    const bool keep =
        std::sscanf(line.c_str(), "%lld %lf %lld %c", &ts, &value, &step, &tail) == 3 && step <= last_step;
    if (keep) {
      kept += line + "\n";
    } else {
      ++dropped;
    }
  }
  if (dropped > 0) ml_write(path, kept);
  return dropped;
}

struct MlflowRun {
  fs::path dir;
  std::string experiment_id, run_id, run_name, artifact_uri, user;
  int64_t start_time = 0;
};

class MlflowBackend final : public sdk::MetricBackend {
 public:
  explicit MlflowBackend(MlflowRun run) : run_(std::move(run)) { write_meta(kRunning, std::nullopt); }

  void log(int64_t step, const sdk::MetricList& metrics) override {
    const std::string stamp = std::to_string(ml_now_ms());
    for (const auto& [name, value] : metrics) {
      auto [it, added] = keys_.try_emplace(name);
      if (added) it->second = ml_metric_key(name);
      const fs::path path = run_.dir / "metrics" / it->second;
      if (added) fs::create_directories(path.parent_path());
      char number[64];
      if (std::isnan(value)) {
        std::snprintf(number, sizeof(number), "nan");
      } else {
        std::snprintf(number, sizeof(number), "%.17g", value);  // "inf", "-inf" as Python's float() reads them
      }
      std::ofstream out(path, std::ios::app);
      out << stamp << ' ' << number << ' ' << step << '\n';
      if (!out) throw sdk::Error("metrics backend mlflow: cannot append to " + path.string());
    }
  }

  std::string run_id() const override { return run_.run_id; }

  void end(sdk::RunEnd how) override {
    write_meta(how == sdk::RunEnd::finished ? kFinished : how == sdk::RunEnd::killed ? kKilled : kFailed, ml_now_ms());
  }

 private:
  void write_meta(int status, std::optional<int64_t> end_time) const {
    const std::string text =
        "artifact_uri: " + run_.artifact_uri +
        "\ndeleted_time: null\nend_time: " + (end_time ? std::to_string(*end_time) : "null") +
        "\nentry_point_name: ''\nexperiment_id: " + ml_quote(run_.experiment_id) +
        "\nlifecycle_stage: active\nrun_id: " + run_.run_id + "\nrun_name: " + ml_quote(run_.run_name) +
        "\nrun_uuid: " + run_.run_id + "\nsource_name: ''\nsource_type: " + std::to_string(kSourceTypeLocal) +
        "\nsource_version: ''\nstart_time: " + std::to_string(run_.start_time) + "\nstatus: " + std::to_string(status) +
        "\ntags: []\nuser_id: " + ml_quote(run_.user) + "\n";
    ml_write(run_.dir / "meta.yaml", text);
  }

  MlflowRun run_;
  std::map<std::string, std::string> keys_;  // kforge metric name -> MLflow metric key
};

// The directory of run `run_id` in any experiment of the store, if there is one.
std::optional<fs::path> ml_find_run(const fs::path& store, const std::string& run_id) {
  if (run_id.empty() || !fs::is_directory(store)) return std::nullopt;
  for (const fs::path& experiment : ml_experiments(store)) {
    if (fs::exists(experiment / run_id / "meta.yaml")) return experiment / run_id;
  }
  return std::nullopt;
}

// The run `dir` as this run continues it: its metric lines of steps after `resumed_step` dropped.
MlflowRun ml_reopen(const sdk::BuildContext& ctx, const fs::path& dir, int64_t resumed_step) {
  const std::string meta = ml_read(dir / "meta.yaml");
  MlflowRun run{dir,
                ml_yaml_field(meta, "experiment_id"),
                dir.filename().string(),
                ml_yaml_field(meta, "run_name"),
                ml_yaml_field(meta, "artifact_uri"),
                ml_yaml_field(meta, "user_id"),
                std::atoll(ml_yaml_field(meta, "start_time").c_str())};
  int64_t dropped = 0;
  if (fs::is_directory(dir / "metrics")) {
    for (const auto& entry : fs::recursive_directory_iterator(dir / "metrics")) {
      if (entry.is_regular_file()) dropped += ml_keep_steps_up_to(entry.path(), resumed_step);
    }
  }
  ctx.log.info("mlflow: continuing run " + run.run_id + " in " + dir.string() +
               (dropped > 0 ? "; dropped " + std::to_string(dropped) + " metric line(s) of steps after " +
                                  std::to_string(resumed_step)
                            : ""));
  return run;
}

MlflowRun ml_create(const fs::path& store, const std::string& experiment, const std::string& run_name) {
  MlflowRun run;
  run.experiment_id = ml_experiment_id(store, experiment);
  run.run_id = ml_random_hex(32);  // a uuid4's hex digits, as MLflow's run ids
  run.dir = store / run.experiment_id / run.run_id;
  run.run_name = run_name;
  run.artifact_uri = ml_file_uri(run.dir / "artifacts");
  run.user = ml_user();
  run.start_time = ml_now_ms();
  for (const char* sub : {"metrics", "params", "artifacts", "tags"}) fs::create_directories(run.dir / sub);
  const std::pair<const char*, std::string> tags[] = {{"mlflow.runName", run.run_name},
                                                      {"mlflow.user", run.user},
                                                      {"mlflow.source.name", "kforge"},
                                                      {"mlflow.source.type", "LOCAL"}};
  for (const auto& [key, value] : tags) ml_write(run.dir / "tags" / key, value);
  return run;
}

}  // namespace

std::unique_ptr<sdk::MetricBackend> make_mlflow(const sdk::BuildContext& ctx, const sdk::RunInfo& run) {
  if (run.rank != 0 && !run.per_rank) return std::make_unique<NullBackend>();
  const fs::path store = fs::absolute(ctx.section.get_string("mlflow_dir")).lexically_normal();
  std::string run_name = ctx.section.get_string("mlflow_run_name");
  if (run_name.empty()) {
    fs::path named = fs::absolute(run.run_dir).lexically_normal();
    if (run.rank != 0) named = named.parent_path();  // per_rank: <metrics.run_dir>/rank_<r>
    run_name = named.filename().string();
  }
  if (run.rank != 0) run_name += ".rank" + std::to_string(run.rank);  // per_rank: one MLflow run per rank
  MlflowRun ml;
  if (const auto dir = ml_find_run(store, run.resumed_run_id)) {
    ml = ml_reopen(ctx, *dir, run.resumed_step);
  } else {
    if (!run.resumed_run_id.empty()) {
      ctx.log.warn("mlflow: the resumed run " + run.resumed_run_id + " is not in " + store.string() +
                   " ([metrics] mlflow_dir); starting a new MLflow run");
    }
    ml = ml_create(store, ctx.section.get_string("mlflow_experiment"), run_name);
  }
  // The config of this session: a resumed run records what it continues with.
  if (!run.config_toml.empty()) {
    fs::create_directories(ml.dir / "params");
    for (const auto& [key, value] : flatten_config_toml(run.config_toml)) ml_write(ml.dir / "params" / key, value);
  }
  return std::make_unique<MlflowBackend>(std::move(ml));
}

}  // namespace kforge::builtin::metrics
