// CheckpointManager: atomic multi-rank save, retention, and verified, resharding, selective load.
#include "checkpoint/checkpoint_manager.h"

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <regex>

#include "checkpoint/checksum.h"
#include "checkpoint/durable_file.h"
#include "checkpoint/fault_points.h"
#include "checkpoint/incompatible_checkpoint.h"
#include "checkpoint/mapped_file.h"
#include "checkpoint/metadata_schema.h"
#include "kforge/sdk/error.h"
#include "resilience/fault_point.h"

namespace kforge::checkpoint {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFormat = "kforge-checkpoint";
constexpr const char* kTrainState = "train_state.json";
constexpr const char* kConfig = "config.toml";
constexpr const char* kMetadata = "metadata.json";
constexpr const char* kCommit = "commit.json";

// What `action` threw (sdk::Error or a filesystem error), "" when it succeeded.
template <class Fn>
std::string failure_of(Fn&& action) {
  try {
    action();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

constexpr const char* kFailed = "failed: ";  // a rank's report of a failure, followed by why

// Throws, on every rank alike, when any rank's report is a failure.
void throw_if_failed(const std::vector<std::string>& reports, const std::string& stage, int64_t step) {
  std::string failures;
  for (size_t r = 0; r < reports.size(); ++r) {
    if (reports[r].rfind(kFailed, 0) == 0) {
      failures += fmt::format("{}rank {}: {}", failures.empty() ? "" : "; ", r, reports[r].substr(strlen(kFailed)));
    }
  }
  if (!failures.empty()) {
    throw sdk::Error(
        fmt::format("checkpoint of step {} failed ({}): {}. `latest` still points at the previous "
                    "complete checkpoint",
                    step, stage, failures));
  }
}

std::string shard_name(int rank, int world_size) {
  return fmt::format("shard-{:05d}-of-{:05d}.safetensors", rank, world_size);
}

nlohmann::json file_entry(size_t bytes, uint64_t sum) { return {{"bytes", bytes}, {"xxh3", checksum_hex(sum)}}; }

nlohmann::json file_entry(const std::string& bytes) {
  return file_entry(bytes.size(), checksum(bytes.data(), bytes.size()));
}

// This rank's entries of metadata.json's tensor index: "model/<fqn>" or "optimizer/<key>" ->
// {global_shape, offsets} (whole tensors: their own shape at offset 0).
nlohmann::json rank_tensor_index(const TensorMap& tensors, const std::map<std::string, Placement>& placements) {
  nlohmann::json index = nlohmann::json::object();
  for (const auto& [key, t] : tensors) {
    if (key.rfind("rng/", 0) == 0) continue;
    const auto it = placements.find(key);
    index[key] = it != placements.end()
                     ? nlohmann::json{{"global_shape", it->second.global_shape}, {"offsets", it->second.offsets}}
                     : nlohmann::json{{"global_shape", t.sizes().vec()}, {"offsets", std::vector<int64_t>(t.dim(), 0)}};
  }
  return index;
}

// `whole` (allocated on the first piece) with `piece` copied in at `offsets`.
void place(at::Tensor& whole, const at::Tensor& piece, const nlohmann::json& entry, const std::string& origin) {
  const auto shape = entry.at("global_shape").get<std::vector<int64_t>>();
  const auto offsets = entry.at("offsets").get<std::vector<int64_t>>();
  if (offsets.size() != shape.size() || static_cast<int64_t>(shape.size()) != piece.dim()) {
    throw sdk::Error(fmt::format("{}: its placement (global shape {}, offsets {}) does not fit a tensor of shape {}",
                                 origin, entry.at("global_shape").dump(), entry.at("offsets").dump(),
                                 c10::str(piece.sizes())));
  }
  if (!whole.defined()) whole = at::zeros(shape, piece.options());
  at::Tensor target = whole;
  for (int64_t d = 0; d < piece.dim(); ++d) {
    const auto dim = static_cast<size_t>(d);
    if (offsets[dim] < 0 || offsets[dim] + piece.size(d) > shape[dim]) {
      throw sdk::Error(fmt::format("{}: slice at offsets {} of shape {} lies outside the global shape {}", origin,
                                   entry.at("offsets").dump(), c10::str(piece.sizes()), entry.at("global_shape").dump()));
    }
    target = target.narrow(d, offsets[dim], piece.size(d));
  }
  target.copy_(piece);
}

// `bytes` (of `path`) have the size and XXH3 `entry` (in `recorded_in`) records.
void verify_bytes(std::string_view bytes, const nlohmann::json& entry, const fs::path& path,
                  const fs::path& recorded_in) {
  const auto expected = entry.at("bytes").get<size_t>();
  if (bytes.size() != expected) {
    throw sdk::Error(fmt::format("{}: truncated or overwritten ({} bytes, {} records {})", path.string(), bytes.size(),
                                 recorded_in.filename().string(), expected));
  }
  const std::string sum = checksum_hex(checksum(bytes.data(), bytes.size()));
  if (sum != entry.at("xxh3").get<std::string>()) {
    throw sdk::Error(fmt::format("{}: checksum mismatch (XXH3 {}, {} records {}): the file is corrupted", path.string(),
                                 sum, recorded_in.filename().string(), entry.at("xxh3").get<std::string>()));
  }
}

// Refuses metadata of any schema but kSchemaVersion, naming the checkpoint and what to do.
void check_schema(const nlohmann::json& meta, const fs::path& step_dir) {
  const nlohmann::json& field = meta.value("schema_version", nlohmann::json(0));
  if (!field.is_number_integer()) {
    throw sdk::Error(fmt::format("{}: 'schema_version' is {}, not an integer; the checkpoint is damaged",
                                 (step_dir / kMetadata).string(), field.dump()));
  }
  const int version = field.get<int>();
  if (version > kSchemaVersion) {
    throw IncompatibleCheckpoint(fmt::format(
        "checkpoint {} was written by a newer kforge (checkpoint schema {}; this kforge reads schema {}): upgrade "
        "kforge to resume it",
        step_dir.string(), version, kSchemaVersion));
  }
  if (version < kSchemaVersion) {
    throw IncompatibleCheckpoint(fmt::format(
        "checkpoint {} has checkpoint schema {}, which this kforge no longer reads (it reads schema {} only): "
        "resume it with the kforge release that wrote it, or start over with an empty checkpoint.dir (move this "
        "run's checkpoints aside)",
        step_dir.string(), version, kSchemaVersion));
  }
}

std::optional<int64_t> step_of(const fs::path& p) {
  static const std::regex pattern("step_([0-9]+)");
  std::smatch m;
  const std::string name = p.filename().string();
  if (!std::regex_match(name, m, pattern)) return std::nullopt;
  return std::stoll(m[1].str());
}

}  // namespace

CheckpointManager::CheckpointManager(fs::path dir, int64_t keep_last_n, std::function<bool(int64_t)> is_milestone,
                                     SaveGroup group)
    : dir_(std::move(dir)), keep_last_n_(keep_last_n), is_milestone_(std::move(is_milestone)), group_(std::move(group)) {}

std::vector<std::string> CheckpointManager::gather_reports(const std::string& failure, const std::string& done) const {
  const std::string report = failure.empty() ? done : kFailed + failure;
  return group_.world_size > 1 ? group_.all_gather(report) : std::vector<std::string>{report};
}

void CheckpointManager::agree(const std::string& stage, int64_t step, const std::string& failure) const {
  throw_if_failed(gather_reports(failure, "ok"), stage, step);
}

fs::path CheckpointManager::save(const Snapshot& s) {
  const bool leader = group_.rank == 0;
  const std::string name = fmt::format("step_{}", s.step);
  // One temporary name all ranks agree on (a single process adds its pid, as before).
  const fs::path tmp = dir_ / (group_.world_size > 1 ? fmt::format("{}.tmp-ranks{}", name, group_.world_size)
                                                     : fmt::format("{}.tmp-{}", name, ::getpid()));
  const fs::path final_dir = dir_ / name;
  const fs::path replaced = dir_ / fmt::format("{}.tmp-replaced", name);
  agree("preparing the directory", s.step, !leader ? "" : failure_of([&] {
          make_directories(dir_);
          // Leftovers of an interrupted save are never loaded; clear them.
          for (const auto& entry : fs::directory_iterator(dir_)) {
            if (entry.path().filename().string().find(".tmp-") != std::string::npos) remove_tree(entry.path());
          }
          make_directories(tmp);
        }));

  // Every rank streams and fsyncs its shard, then reports it (or why it could not).
  TensorMap tensors;
  for (const auto& [k, t] : s.model) tensors.emplace("model/" + k, t);
  for (const auto& [k, t] : s.optimizer) tensors.emplace("optimizer/" + k, t);
  if (s.rng.defined()) tensors.emplace("rng/torch_cpu", s.rng);
  if (s.rng_cuda.defined()) tensors.emplace("rng/torch_cuda", s.rng_cuda);
  const std::string shard = shard_name(group_.rank, group_.world_size);
  nlohmann::json mine;
  std::string failure = failure_of([&] {
    const WrittenFile shard_file = write_safetensors(tmp / shard, tensors, {{"format", kFormat}});
    mine = {{"file", shard},
            {"entry", file_entry(shard_file.bytes, shard_file.checksum)},
            {"data", s.train_state.at("data").at(0)},
            {"tensors", rank_tensor_index(tensors, s.placements)}};
  });
  const std::vector<std::string> all = gather_reports(failure, mine.dump());
  try {
    throw_if_failed(all, "writing the shards", s.step);
  } catch (const sdk::Error&) {
    if (leader) failure_of([&] { remove_tree(tmp); });  // best effort: the next save clears it anyway
    throw;
  }

  // Rank 0 commits once every shard is durable: the files, the rename, then `latest`.
  agree(
      "committing", s.step, !leader ? "" : failure_of([&] {
        nlohmann::json train_state = s.train_state;
        train_state["step"] = s.step;
        train_state["tokens_seen"] = s.tokens_seen;
        train_state["data"] = nlohmann::json::array();
        nlohmann::json meta = {{"format", kFormat},
                               {"schema_version", kSchemaVersion},
                               {"step", s.step},
                               {"tokens_seen", s.tokens_seen},
                               {"world_size", group_.world_size},
                               {"plugins", s.plugins.is_null() ? nlohmann::json::array() : s.plugins},
                               {"tensors", nlohmann::json::object()},
                               {"files", nlohmann::json::object()}};
        for (size_t r = 0; r < all.size(); ++r) {
          const nlohmann::json rank_part = nlohmann::json::parse(all[r]);
          const std::string file = rank_part.at("file").get<std::string>();
          meta["files"][file] = rank_part.at("entry");
          train_state["data"].push_back(rank_part.at("data"));
          for (const auto& [key, entry] : rank_part.at("tensors").items()) {
            nlohmann::json& tensor = meta["tensors"][key];
            tensor["global_shape"] = entry.at("global_shape");
            tensor["shards"].push_back({{"file", file}, {"rank", r}, {"offsets", entry.at("offsets")}});
          }
        }
        const std::map<std::string, std::string> files = {{kTrainState, train_state.dump(2)}, {kConfig, s.config_toml}};
        for (const auto& [file, bytes] : files) {
          write_durable(tmp / file, bytes);
          meta["files"][file] = file_entry(bytes);
        }
        const std::string meta_bytes = meta.dump(2);
        write_durable(tmp / kMetadata, meta_bytes);
        write_durable(tmp / kCommit, nlohmann::json{{kMetadata, file_entry(meta_bytes)}}.dump(2));  // last: seals it
        sync_directory(tmp);
        resilience::fault_point(kFaultPointFsynced);

        const bool replacing = fs::exists(final_dir);  // a complete step_N is moved aside, removed once replaced
        if (replacing) rename_path(final_dir, replaced);
        // latest.tmp names the step before it is renamed into place: a run stopped before `latest` moves leaves
        // it pointing at a complete step, which load_newest then takes before `latest`.
        stage_symlink(dir_ / "latest", name);
        sync_directory(dir_);
        rename_path(tmp, final_dir);
        sync_directory(dir_);
        resilience::fault_point(kFaultPointRenamed);
        commit_symlink(dir_ / "latest");
        sync_directory(dir_);
        resilience::fault_point(kFaultPointLatestMoved);
        if (replacing) remove_tree(replaced);
        prune();
      }));
  return final_dir;
}

std::vector<std::pair<int64_t, fs::path>> CheckpointManager::list() const {
  std::vector<std::pair<int64_t, fs::path>> out;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir_)) {
    // Symlinks (`latest`, possibly dangling or a loop) are skipped before anything follows them.
    if (entry.is_symlink(ec) || !entry.is_directory(ec)) continue;
    if (auto step = step_of(entry.path())) out.emplace_back(*step, entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

void CheckpointManager::prune() const {
  if (keep_last_n_ <= 0) return;
  std::error_code ec;
  const fs::path latest = fs::canonical(dir_ / "latest", ec);
  auto all = list();
  const int64_t excess = static_cast<int64_t>(all.size()) - keep_last_n_;
  for (int64_t k = 0; k < excess; ++k) {
    const auto& [step, path] = all[static_cast<size_t>(k)];
    if (is_milestone_ && is_milestone_(step)) continue;
    if (!latest.empty() && fs::equivalent(path, latest, ec)) continue;
    remove_tree(path);
  }
}

Snapshot CheckpointManager::load(const fs::path& step_dir, int rank, const TensorFilter& wanted) {
  try {
    return load_checked(step_dir, rank, wanted);
  } catch (const nlohmann::json::exception& e) {  // a defect the schema checks missed: still a damaged checkpoint
    throw sdk::Error(
        fmt::format("{}: unreadable checkpoint ({}); the checkpoint is damaged", step_dir.string(), e.what()));
  }
}

Snapshot CheckpointManager::load_checked(const fs::path& step_dir, int rank, const TensorFilter& wanted) {
  const fs::path meta_path = step_dir / kMetadata;
  const MappedFile meta_file(meta_path);
  const nlohmann::json meta = parse_json_object(meta_file.bytes(), meta_path);
  if (meta.value("format", nlohmann::json()) != kFormat) {
    throw sdk::Error(fmt::format("{}: not a kforge checkpoint (format {})", meta_path.string(),
                                 meta.value("format", nlohmann::json()).dump()));
  }
  check_schema(meta, step_dir);
  // metadata.json is sealed by commit.json's size and checksum of it; then every field is checked.
  const fs::path commit_path = step_dir / kCommit;
  const nlohmann::json commit = parse_json_object(MappedFile(commit_path).bytes(), commit_path);
  if (!commit.contains(kMetadata)) {
    throw sdk::Error(fmt::format("{}: no entry for {}; the checkpoint is damaged", commit_path.string(), kMetadata));
  }
  check_file_entry(commit.at(kMetadata), kMetadata, commit_path);
  verify_bytes(meta_file.bytes(), commit.at(kMetadata), meta_path, commit_path);
  check_metadata(meta, meta_path);
  if (const auto named = step_of(step_dir); named && *named != meta.at("step").get<int64_t>()) {
    throw sdk::Error(fmt::format("{}: 'step' is {} in directory {}; the checkpoint is damaged", meta_path.string(),
                                 meta.at("step").get<int64_t>(), step_dir.filename().string()));
  }
  std::map<std::string, MappedFile> contents;
  for (const auto& [file, info] : meta.at("files").items()) {
    const fs::path path = step_dir / file;
    verify_bytes(contents.try_emplace(file, path).first->second.bytes(), info, path, meta_path);
  }
  const int world_size = meta.at("world_size").get<int>();
  const std::string own_shard = shard_name(rank < world_size ? rank : 0, world_size);
  std::vector<std::string> required = {kTrainState, kConfig};
  for (int r = 0; r < world_size; ++r) required.push_back(shard_name(r, world_size));
  for (const std::string& file : required) {
    if (!contents.count(file)) throw sdk::Error(fmt::format("{}: missing from the checkpoint", (step_dir / file).string()));
  }
  Snapshot s;
  s.step = meta.at("step").get<int64_t>();
  s.tokens_seen = meta.at("tokens_seen").get<int64_t>();
  s.plugins = meta.at("plugins");
  s.config_toml = contents.at(kConfig).bytes();
  s.train_state = parse_json_object(contents.at(kTrainState).bytes(), step_dir / kTrainState);
  check_train_state(s.train_state, meta, step_dir / kTrainState);
  // Every model and optimizer tensor whole again: the slices of all ranks placed by the index.
  const nlohmann::json& index = meta.at("tensors");
  std::map<std::string, int64_t> covered;  // elements placed, per sliced tensor
  for (int r = 0; r < world_size; ++r) {
    const std::string shard = shard_name(r, world_size);
    const std::string origin = (step_dir / shard).string();
    const auto take = [&](const std::string& name) {
      return name.rfind("rng/", 0) == 0 ? shard == own_shard : !wanted || wanted(name);
    };
    for (auto& [name, t] : decode_safetensors(contents.at(shard).bytes(), origin, take)) {
      if (name == "rng/torch_cpu" || name == "rng/torch_cuda") {
        (name == "rng/torch_cpu" ? s.rng : s.rng_cuda) = t;
        continue;
      }
      const bool model = model_tensor(name);
      if (!model && name.rfind("optimizer/", 0) != 0) continue;
      TensorMap& target = model ? s.model : s.optimizer;
      const std::string key = name.substr(model ? 6 : 10);
      nlohmann::json entry = {{"global_shape", t.sizes().vec()}, {"offsets", std::vector<int64_t>(t.dim(), 0)}};
      if (index.contains(name)) {
        for (const auto& piece : index.at(name).at("shards")) {
          if (piece.at("file").get<std::string>() == shard) {
            entry = {{"global_shape", index.at(name).at("global_shape")}, {"offsets", piece.at("offsets")}};
          }
        }
      }
      if (entry.at("global_shape").get<std::vector<int64_t>>() == t.sizes().vec()) {
        target[key] = t;  // whole (replicas may write the same tensor; any copy will do)
      } else {
        place(target[key], t, entry, fmt::format("{} tensor '{}'", origin, name));
        covered[name] += t.numel();
      }
    }
  }
  for (const auto& [name, elements] : covered) {
    const at::Tensor& whole = model_tensor(name) ? s.model.at(name.substr(6)) : s.optimizer.at(name.substr(10));
    if (elements != whole.numel()) {
      throw sdk::Error(fmt::format("{}: the slices of tensor '{}' cover {} of its {} elements; a rank's shard is missing "
                                   "part of it",
                                   step_dir.string(), name, elements, whole.numel()));
    }
  }
  return s;
}

std::optional<Snapshot> CheckpointManager::load_newest(const std::function<void(const std::string&)>& warn,
                                                       const TensorFilter& wanted) const {
  // `latest` first, as KempnerForge's auto-resume takes it (also when re-pointed to an older step), unless latest.tmp
  // names a complete step: a save stages it before renaming the step into place, so a run stopped before `latest`
  // moved left its last complete step there. Then every step, newest first.
  std::vector<fs::path> candidates;
  std::error_code ec;
  std::error_code unresolved;
  const fs::path latest = fs::canonical(dir_ / "latest", unresolved);
  if (unresolved || !fs::is_directory(latest, ec)) {
    if (fs::is_symlink(fs::symlink_status(dir_ / "latest", ec))) {  // dangling, a loop, or not a directory
      warn(fmt::format("{} does not lead to a checkpoint directory ({}); looking at the step_* directories instead",
                       (dir_ / "latest").string(), unresolved ? unresolved.message() : "not a directory"));
    }
  }
  const auto all = list();
  const auto step_at = [&](const fs::path& path) {
    return std::find_if(all.begin(), all.end(), [&](const auto& step) { return fs::equivalent(step.second, path, ec); });
  };
  const auto latest_step = unresolved ? all.end() : step_at(latest);
  std::error_code unstaged;
  const fs::path staged = fs::canonical(staged_symlink(dir_ / "latest"), unstaged);
  const auto staged_step = unstaged ? all.end() : step_at(staged);
  if (staged_step != all.end() && staged_step != latest_step) candidates.push_back(staged_step->second);
  if (!unresolved && fs::is_directory(latest, ec) && latest_step == all.end()) candidates.push_back(latest);
  if (latest_step != all.end()) {
    if (candidates.empty() && latest_step->first < all.back().first) {
      warn(fmt::format("{} points at step_{}, older than the newest complete checkpoint step_{}: resuming from step_{} "
                       "as `latest` says (it was re-pointed after step_{} was written; point it at step_{} or remove "
                       "it to resume from the newest)",
                       (dir_ / "latest").string(), latest_step->first, all.back().first, latest_step->first,
                       all.back().first, all.back().first));
    }
    candidates.push_back(latest_step->second);
  }
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    if (std::find(candidates.begin(), candidates.end(), it->second) == candidates.end()) {
      candidates.push_back(it->second);
    }
  }
  if (candidates.empty()) return std::nullopt;
  std::string failures;
  for (const fs::path& dir : candidates) {
    try {
      return load(dir, group_.rank, wanted);
    } catch (const IncompatibleCheckpoint&) {
      throw;  // intact but unreadable by this kforge: an older step would silently lose progress
    } catch (const sdk::Error& e) {
      warn(fmt::format("skipping checkpoint {}: {}", dir.string(), e.what()));
      failures += fmt::format("\n  {}", e.what());
    }
  }
  throw sdk::Error(fmt::format("{} holds checkpoints but none is complete; refusing to start from scratch. Move the "
                               "directory aside to start fresh, or set checkpoint.load_path.{}",
                               dir_.string(), failures));
}

}  // namespace kforge::checkpoint
