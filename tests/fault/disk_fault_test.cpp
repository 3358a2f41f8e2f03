// A full disk (ENOSPC from the n-th write, writev or fsync) and a checkpoint directory that turns
// read-only (EROFS or EACCES from the n-th open for writing, mkdir, rename, ...) during the save of
// step 4, through the LD_PRELOAD shim (io_fault_shim.cpp), on one rank of a 1-rank and a 2-rank
// FSDP job; n is a seeded choice among the calls that save makes (counted in a run where none fails).
// The job must fail cleanly (exit 1), naming the path and the error; steps 1-3 stay complete and
// `latest` stays on step 3; after the last case a rerun resumes from step 3. Prints
// "[ fault    ] disk ...".
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>

#include "checkpoint/checkpoint_manager.h"
#include "fault_job.h"

namespace kforge::test {
namespace {
namespace fs = std::filesystem;

constexpr int64_t kDiskSteps = 6;
constexpr const char* kDiskSave = "step_4.";  // the temporary directory of step 4's save

struct ShimCall {
  pid_t pid = -1;
  std::string call, result, path;
};

std::vector<ShimCall> read_shim_log(const fs::path& log) {
  std::vector<ShimCall> calls;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    ShimCall c;
    fields >> c.pid >> c.call >> c.result;
    std::getline(fields >> std::ws, c.path);
    calls.push_back(c);
  }
  return calls;
}

// A shim call's path relative to the checkpoint directory, with a single process's temporary
// directory name (step_4.tmp-<pid>) made the same in every run.
std::string disk_site(const std::string& path, const fs::path& checkpoints) {
  static const std::regex pid_suffix("\\.tmp-[0-9]+");
  const std::string relative = fs::path(path).lexically_relative(checkpoints).string();
  return std::regex_replace(relative, pid_suffix, ".tmp-<pid>");
}

struct DiskCase {
  std::string kind, error;
  int rank = 0;
};

// Per rank: the calls of `kind` under the checkpoint directory from the first one of step 4's save
// on, in a run where none fails (the shim's NTH counts these); paths as disk_site gives them.
std::map<int, std::vector<ShimCall>> disk_calls(int world, const std::string& kind) {
  FaultJob job("disk_calls", world, kDiskSteps);
  const fs::path log = job.root / "calls.log";
  std::map<int, pid_t> ranks;
  JobWatch watch;
  watch.on_line = [&](const std::string&, const RunningJob& running) {
    for (int r = 0; r < world; ++r) ranks[r] = running.rank_pid(r);
  };
  const JobEnd end = job.run(io_fault_env({{"KFORGE_IOFAULT_DIR", job.checkpoints.string()},
                                           {"KFORGE_IOFAULT_KIND", kind},
                                           {"KFORGE_IOFAULT_AFTER", kDiskSave},
                                           {"KFORGE_IOFAULT_NTH", "0"},
                                           {"KFORGE_IOFAULT_LOG", log.string()}}),
                             watch);
  EXPECT_EQ(end.code(), 0) << end.output;
  std::map<int, std::vector<ShimCall>> by_rank;
  for (const ShimCall& c : read_shim_log(log)) {
    for (const auto& [rank, pid] : ranks) {
      if (pid == c.pid) by_rank[rank].push_back({c.pid, c.call, c.result, disk_site(c.path, job.checkpoints)});
    }
  }
  return by_rank;
}

struct DiskCounts {
  int cases = 0, clean = 0, intact = 0, reruns = 0, resumed = 0;
};

// One fault during step 4's save; with `rerun`, the job is then run again without the shim.
void disk_case(int world, const DiskCase& c, const std::vector<ShimCall>& calls, bool rerun, std::mt19937_64& rng,
               DiskCounts& counts) {
  std::vector<size_t> save_calls;  // 1-based NTH values of the calls inside step 4's save
  for (size_t i = 0; i < calls.size(); ++i) {
    if (calls[i].path.find(kDiskSave) != std::string::npos) save_calls.push_back(i + 1);
  }
  ASSERT_FALSE(save_calls.empty()) << "no " << c.kind << " call of rank " << c.rank << " in step 4's save";
  const size_t nth = save_calls[rng() % save_calls.size()];
  const ShimCall& target = calls[nth - 1];
  const std::string what = fmt::format("{} from {} #{} on rank {} ({})", c.error, c.kind, nth, c.rank, target.call);
  ++counts.cases;

  FaultJob job("disk", world, kDiskSteps);
  const fs::path log = job.root / "faults.log";
  const JobEnd end = job.run(io_fault_env({{"KFORGE_IOFAULT_DIR", job.checkpoints.string()},
                                           {"KFORGE_IOFAULT_KIND", c.kind},
                                           {"KFORGE_IOFAULT_ERRNO", c.error},
                                           {"KFORGE_IOFAULT_AFTER", kDiskSave},
                                           {"KFORGE_IOFAULT_NTH", std::to_string(nth)},
                                           {"KFORGE_IOFAULT_RANK", std::to_string(c.rank)},
                                           {"KFORGE_IOFAULT_LOG", log.string()}}));
  ASSERT_FALSE(end.timed_out) << what << "\n" << end.output;
  const std::vector<ShimCall> failed = read_shim_log(log);
  ASSERT_FALSE(failed.empty()) << what << ": the shim failed no call\n" << end.output;
  EXPECT_EQ(disk_site(failed.front().path, job.checkpoints), target.path)
      << what << ": not the call counted in the run without faults";
  const int error = c.error == "ENOSPC" ? ENOSPC : c.error == "EROFS" ? EROFS : EACCES;
  const bool named =
      end.output.find(failed.front().path) != std::string::npos &&
      (end.output.find(std::strerror(error)) != std::string::npos || end.output.find(c.error) != std::string::npos);
  EXPECT_EQ(end.code(), 1) << what << ": not a clean failure\n" << end.output;
  EXPECT_TRUE(named) << what << ": the output does not name " << failed.front().path << " and '" << std::strerror(error)
                     << "'\n"
                     << end.output;
  if (end.code() == 1 && named) ++counts.clean;

  // Older checkpoints intact: steps 1-3 load, `latest` is step 3, and nothing of step 4 is visible.
  bool intact = true;
  for (int64_t step = 1; step <= 3; ++step) {
    try {
      checkpoint::CheckpointManager::load(job.checkpoints / fmt::format("step_{}", step));
    } catch (const std::exception& e) {
      intact = false;
      ADD_FAILURE() << what << ": " << e.what();
    }
  }
  std::error_code ec;
  const fs::path latest = fs::read_symlink(job.checkpoints / "latest", ec);
  if (latest != "step_3" || fs::exists(job.checkpoints / "step_4")) {
    intact = false;
    ADD_FAILURE() << what << ": latest -> '" << latest.string() << "', step_4 "
                  << (fs::exists(job.checkpoints / "step_4") ? "exists" : "absent") << "\n"
                  << end.output;
  }
  if (intact) ++counts.intact;
  if (!rerun) return;

  ++counts.reruns;
  const JobEnd again = job.run();
  EXPECT_EQ(again.code(), 0) << what << "\n" << again.output;
  EXPECT_EQ(resumed_step(again.output), std::optional<int64_t>(3)) << what << "\n" << again.output;
  if (again.code() == 0 && resumed_step(again.output) == std::optional<int64_t>(3)) ++counts.resumed;
}

void disk_faults(int world, const std::vector<DiskCase>& cases, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, std::map<int, std::vector<ShimCall>>> calls;  // kind -> rank -> calls
  DiskCounts counts;
  for (const DiskCase& c : cases) {
    if (!calls.count(c.kind)) calls[c.kind] = disk_calls(world, c.kind);
    disk_case(world, c, calls[c.kind][c.rank], &c == &cases.back(), rng, counts);
  }
  report_fault(fmt::format("disk world={} cases={} clean_failures={} older_intact={} reruns={} resumed={} seed={}",
                           world, counts.cases, counts.clean, counts.intact, counts.reruns, counts.resumed, seed));
}

TEST(FaultDisk, OneRankDiskFullOrReadOnlyDuringASaveFailsCleanlyAndKeepsOlderCheckpoints) {
  disk_faults(1,
              {{"write", "ENOSPC", 0},
               {"write", "ENOSPC", 0},
               {"write", "ENOSPC", 0},
               {"mutate", "EROFS", 0},
               {"mutate", "EACCES", 0}},
              4101);
}

TEST(FaultDisk, TwoRankFsdpDiskFullOrReadOnlyDuringASaveFailsCleanlyAndKeepsOlderCheckpoints) {
  disk_faults(2, {{"write", "ENOSPC", 1}, {"write", "ENOSPC", 0}, {"mutate", "EROFS", 0}, {"mutate", "EACCES", 1}},
              4102);
}

}  // namespace
}  // namespace kforge::test
