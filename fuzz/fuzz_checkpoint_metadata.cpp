// Fuzz target: a checkpoint's metadata.json as CheckpointManager::load reads it (core/checkpoint).
// load takes a step directory, so the input replaces metadata.json in a real one-rank checkpoint written at
// start-up (its other files intact), and commit.json, which seals metadata.json, records the input's size and
// checksum. KFORGE_FUZZ_SEED_OUT=<file> copies that checkpoint's metadata.json out.
#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/checksum.h"
#include "kforge/sdk/error.h"
#include "scratch_file.h"

namespace {

std::filesystem::path checkpoint_template() {
  namespace cp = kforge::checkpoint;
  at::manual_seed(0);
  cp::Snapshot s;
  s.step = 1;
  s.tokens_seen = 64;
  s.model = {{"w", at::arange(6, at::kFloat).reshape({2, 3})}, {"b", at::ones({3}, at::kFloat)}};
  s.optimizer = {{"w.exp_avg", at::zeros({2, 3}, at::kFloat)}};
  s.rng = at::detail::getDefaultCPUGenerator().get_state();
  s.train_state = {{"data", {{{"position", 0}}}}, {"scheduler", {{"step", 1}}}};
  s.config_toml = "[train]\nseed = 0\n";
  s.plugins = nlohmann::json::array();
  const std::filesystem::path dir = cp::CheckpointManager(kforge::fuzz::scratch_dir() / "ckpt", 0, {}).save(s);
  if (const char* out = std::getenv("KFORGE_FUZZ_SEED_OUT")) {
    std::filesystem::copy_file(dir / "metadata.json", out, std::filesystem::copy_options::overwrite_existing);
  }
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path step_dir = checkpoint_template();
  static nlohmann::json commit = nlohmann::json::parse(std::ifstream(step_dir / "commit.json"));
  kforge::fuzz::write_bytes(step_dir / "metadata.json", data, size);
  commit["metadata.json"]["bytes"] = size;
  commit["metadata.json"]["xxh3"] = kforge::checkpoint::checksum_hex(kforge::checkpoint::checksum(data, size));
  const std::string sealed = commit.dump(2);
  kforge::fuzz::write_bytes(step_dir / "commit.json", reinterpret_cast<const uint8_t*>(sealed.data()), sealed.size());
  try {
    kforge::checkpoint::CheckpointManager::load(step_dir);
  } catch (const kforge::sdk::Error&) {
    // A refused checkpoint (sdk::Error, IncompatibleCheckpoint) is the documented outcome: load_newest skips it.
    // Any other exception escapes load_newest's fallback, so it escapes here as a finding.
  }
  return 0;
}
