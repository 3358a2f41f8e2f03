// preflight: the build-time checks of a run, without the model or a process group.
#include "train/preflight.h"

#include <fmt/format.h>

#include "config/rules.h"
#include "config/support_check.h"
#include "dist/device_mesh.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"
#include "train/precision.h"

namespace kforge::train {
namespace {

// An optimizer declaring KFORGE_CAP_NEEDS_WHOLE_MATRICES (Muon's orthogonalisation) would be another
// algorithm on FSDP row shards.
void check_optimizer_layout(const config::JobConfig& job, const plugins::Components& components, int world_size) {
  const int shards = dist::MeshShape::resolve(job.distributed, world_size).size("dp_shard");
  if (shards > 1 && (components.optimizer_capabilities() & KFORGE_CAP_NEEDS_WHOLE_MATRICES) != 0) {
    const std::string name = job.view("optimizer").get_string("name");
    throw sdk::ConfigError(fmt::format("[optimizer] name = \"{}\" updates whole weight matrices (it declares "
                                       "KFORGE_CAP_NEEDS_WHOLE_MATRICES) and cannot update FSDP row shards "
                                       "([distributed] dp_shard = {}); use dp_replicate for data parallelism with {}",
                                       name, shards, name));
  }
}

}  // namespace

Preflight preflight(const config::JobConfig& job, const plugins::Components& components, int world_size) {
  Preflight out;
  out.warnings = config::check_support(job.tree);
  config::check_world(job.tree, world_size);
  cpu_autocast_dtype(job.train.mixed_precision);  // refuses what the CPU cannot do
  check_optimizer_layout(job, components, world_size);
  if (job.data.dataset_path.empty()) {
    throw sdk::ConfigError(
        "[data] dataset_path is not set: point it at a directory of tokenised shards (make one with "
        "`kforge prepare-data --input FILE.txt --output DIR --train-tokenizer --vocab-size 8000`)");
  }
  out.train_data = components.dataset(job.data.dataset_path, job.data.file_pattern);
  if (job.eval.enabled) out.eval_data = components.dataset(job.eval.dataset_path, job.eval.file_pattern);
  return out;
}

}  // namespace kforge::train
