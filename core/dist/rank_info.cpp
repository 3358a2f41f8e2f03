#include "dist/rank_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

// The leading decimal integer of `text` (all of it unless `prefix_only`), in [lo, hi]; else a
// ConfigError naming the variable.
int64_t parse_env_int(const char* name, const std::string& text, int64_t lo, int64_t hi, bool prefix_only = false) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error == std::errc() && (stop == end || (prefix_only && stop != text.data())) && value >= lo && value <= hi) {
    return value;
  }
  throw sdk::ConfigError(fmt::format("environment variable {}='{}' is not an integer in [{}, {}]", name, text, lo, hi));
}

int env_int(const char* name, int fallback) {
  const auto v = env(name);
  if (!v) return fallback;
  return static_cast<int>(parse_env_int(name, *v, std::numeric_limits<int>::min(), std::numeric_limits<int>::max()));
}

}  // namespace

std::string first_slurm_host(const std::string& nodelist) {
  const std::string first = nodelist.substr(0, nodelist.find_first_of(",["));
  const size_t bracket = nodelist.find('[');
  const size_t comma = nodelist.find(',');
  if (bracket == std::string::npos || (comma != std::string::npos && comma < bracket)) return first;
  // prefix[03-05,09]: the first number of the range list keeps its zero padding.
  const size_t end = nodelist.find_first_of("-,]", bracket + 1);
  return first + nodelist.substr(bracket + 1, end - bracket - 1);
}

RankInfo rank_info_from_env() {
  RankInfo info;
  if (env("WORLD_SIZE")) {
    info.source = "torchrun";
    info.world_size = env_int("WORLD_SIZE", 1);
    info.rank = env_int("RANK", 0);
    info.local_rank = env_int("LOCAL_RANK", info.rank);
    info.local_world_size = env_int("LOCAL_WORLD_SIZE", info.world_size);
  } else if (env("SLURM_NTASKS")) {
    info.source = "SLURM";
    info.world_size = env_int("SLURM_NTASKS", 1);
    info.rank = env_int("SLURM_PROCID", 0);
    info.local_rank = env_int("SLURM_LOCALID", 0);
    // SLURM_NTASKS_PER_NODE / SLURM_TASKS_PER_NODE read "4" or "4(x2)": the count before any
    // repetition suffix; without them, the tasks spread evenly over SLURM_NNODES.
    const auto per_node = env("SLURM_NTASKS_PER_NODE") ? env("SLURM_NTASKS_PER_NODE") : env("SLURM_TASKS_PER_NODE");
    const char* per_node_var = env("SLURM_NTASKS_PER_NODE") ? "SLURM_NTASKS_PER_NODE" : "SLURM_TASKS_PER_NODE";
    info.local_world_size =
        per_node ? static_cast<int>(parse_env_int(per_node_var, *per_node, 1, std::numeric_limits<int>::max(), true))
                 : info.world_size / std::max(1, env_int("SLURM_NNODES", 1));
    if (const auto nodes = env("SLURM_NODELIST")) {
      info.master_addr = first_slurm_host(*nodes);
      if (info.master_addr.empty()) {
        throw sdk::ConfigError(fmt::format("environment variable SLURM_NODELIST='{}' names no host", *nodes));
      }
    }
    if (const auto job = env("SLURM_JOB_ID")) {
      const int64_t id = parse_env_int("SLURM_JOB_ID", *job, 0, std::numeric_limits<int64_t>::max());
      info.master_port = 15000 + static_cast<int>(id % 15000);
    }
  }
  if (const auto addr = env("MASTER_ADDR")) info.master_addr = *addr;
  info.master_port = env_int("MASTER_PORT", info.master_port);
  const char* world_var = info.source == "SLURM" ? "SLURM_NTASKS" : "WORLD_SIZE";
  if (info.world_size < 1) throw sdk::ConfigError(fmt::format("{}={} must be >= 1", world_var, info.world_size));
  if (info.rank < 0 || info.rank >= info.world_size) {
    throw sdk::ConfigError(fmt::format("rank {} (from {}) is not in [0, {}={})", info.rank,
                                       info.source == "SLURM" ? "SLURM_PROCID" : "RANK", world_var, info.world_size));
  }
  if (info.local_world_size < 1 || info.local_world_size > info.world_size || info.local_rank < 0 ||
      info.local_rank >= info.local_world_size) {
    throw sdk::ConfigError(fmt::format("local rank {} of {} local processes does not fit a world of {} ({} layout)",
                                       info.local_rank, info.local_world_size, info.world_size, info.source));
  }
  if (info.master_port < 1 || info.master_port > 65535) {
    throw sdk::ConfigError(fmt::format("MASTER_PORT={} is not a TCP port (1..65535)", info.master_port));
  }
  return info;
}

}  // namespace kforge::dist
