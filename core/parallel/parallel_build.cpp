// Building a run's ParallelModel: the stages, the shardings and the data parallelism under them, each logged.
#include "parallel/parallel_build.h"

#include <fmt/format.h>

#include <optional>

#include "log/log.h"
#include "parallel/fully_sharded.h"
#include "parallel/group_parallel.h"
#include "parallel/pipeline_parallel.h"
#include "parallel/plain_parallel.h"
#include "parallel/replicated_model.h"
#include "parallel/sharded_parallel.h"
#include "parallel/stage_split.h"

namespace kforge::parallel {
namespace {

// How many of `names`' tensors and parameters this rank holds.
std::string describe_held(const sdk::Model& model, const std::vector<std::string>& names) {
  int64_t elements = 0;
  const auto params = model.named_parameters(/*recurse=*/true);
  for (const std::string& name : names) elements += params[name].numel();
  return fmt::format("{} tensors, {:.2f} M parameters", names.size(), static_cast<double>(elements) / 1e6);
}

template <class Shard>
std::vector<std::string> names_of(const std::vector<Shard>& shards) {
  std::vector<std::string> out;
  for (const Shard& shard : shards) out.push_back(shard.name);
  return out;
}

double megabytes(const std::vector<sdk::NamedParameter>& params) {
  int64_t n = 0;
  for (const auto& p : params) n += p.tensor.numel() * static_cast<int64_t>(p.tensor.element_size());
  return static_cast<double>(n) / 1e6;
}

// dp_shard > 1: FSDP over dp_shard x cp (HSDP over dp_replicate); otherwise, on several data- or context-parallel
// ranks, the overlapped gradient all-reduce over dp x cp; in one process the model as it is. A step runs `forwards`
// forwards.
std::unique_ptr<ParallelModel> data_parallel_model(const dist::Runtime& runtime, const ParallelInputs& in,
                                                   int64_t forwards) {
  const dist::DeviceMesh& mesh = runtime.mesh();
  if (mesh.shape().size("dp_shard") == 1) {
    const dist::Group& reduce = mesh.group("dp_cp");
    std::unique_ptr<ReplicatedModel> replicated;
    if (reduce.size() > 1) replicated = std::make_unique<ReplicatedModel>(in.model, reduce, in.params, forwards);
    return std::make_unique<PlainParallel>(in.model, in.params, mesh, reduce, std::move(replicated));
  }
  const int shards = mesh.shape().size("dp_shard_cp");
  auto fsdp =
      std::make_unique<FullyShardedModel>(in.model, mesh.group("dp_shard_cp"), mesh.group("dp_replicate"), in.whole);
  // A pipeline stage's forward runs one chunk's blocks: a step's forwards together run them all.
  if (in.stages.pipeline) fsdp->check_blocks_over(forwards);
  log::get().info(
      "[distributed] FSDP over {} = {}{}: this rank holds {:.2f} of {:.2f} MB of parameters, and "
      "their gradients and optimizer state; blocks are gathered one at a time{}",
      mesh.shape().size("cp") > 1 ? "dp_shard x cp" : "dp_shard", shards,
      mesh.shape().size("dp_replicate") > 1 ? " (HSDP: replicated over dp_replicate)" : "",
      megabytes(fsdp->shards()), megabytes(in.params) - megabytes(fsdp->whole()),
      fsdp->whole().empty()
          ? ""
          : fmt::format("; the vision encoder, frozen all run, is held whole ({:.2f} MB)", megabytes(fsdp->whole())));
  return std::make_unique<ShardedParallel>(in.model, mesh, std::move(fsdp));
}

}  // namespace

PipelineStages split_into_stages(const config::JobConfig& job, const plugins::Components& components,
                                 const dist::Runtime& runtime, std::shared_ptr<sdk::Model> whole) {
  const dist::Group& pp = runtime.mesh().group("pp");
  const sdk::ConfigView& distributed = job.view("distributed");
  std::unique_ptr<sdk::PipelineSchedule> schedule = components.pipeline_schedule();
  const std::string name = distributed.get_string("pp_schedule");
  const int chunks = schedule->chunks();
  StageSplit split = split_stages(static_cast<int64_t>(whole->blocks().size()), pp.size() * chunks,
                                  distributed.get_int_list("pp_layer_split"));
  const std::string layout = split.describe();
  PipelineStages out;
  out.stage = std::make_shared<StageModel>(std::move(whole), std::move(split), pp.size(), pp.rank());
  out.stage->train();
  out.pipeline = std::make_unique<Pipeline>(*out.stage, pp, std::move(schedule), name,
                                            static_cast<int>(job.train.grad_accum_steps));
  // pp is the mesh's outermost dimension: stage s runs on the s-th block of world / pp consecutive ranks.
  const int per_stage = runtime.world_size() / pp.size();
  std::string ranks;
  for (int s = 0; s < pp.size(); ++s) {
    ranks +=
        fmt::format("{}stage {} on rank{} {}", s ? ", " : "", s, per_stage > 1 ? "s" : "",
                    per_stage > 1 ? fmt::format("{}-{}", s * per_stage, (s + 1) * per_stage - 1) : std::to_string(s));
  }
  log::get().info(
      "[distributed] pp = {}, pp_schedule = \"{}\" ({} chunk(s) per rank, {} micro-batches per step): blocks per "
      "virtual stage {}; pipeline {}; rank {} holds {}; the order leaves a {:.1f}% bubble (forward 1, backward 2)",
      pp.size(), name, chunks, job.train.grad_accum_steps, layout, ranks, runtime.rank(), out.stage->describe(),
      100 * out.pipeline->planned_bubble());
  return out;
}

std::unique_ptr<ParallelModel> build_parallel_model(const config::JobConfig& job, const dist::Runtime& runtime,
                                                    ParallelInputs in) {
  const dist::DeviceMesh& mesh = runtime.mesh();
  auto& log = log::get();
  std::optional<GroupSharding> experts, tensors;
  if (in.experts != nullptr) {
    experts.emplace(expert_sharding(in.model, mesh.group("ep")));
    log.info(
        "[distributed] ep = {}: this rank holds its share of the MoE experts ({}); the ranks of an ep group see the "
        "same batch, and each routes its share of the tokens to the experts' ranks",
        in.experts->size(), describe_held(in.model, names_of(in.model.expert_shards())));
  }
  if (in.tensors != nullptr) {
    tensors.emplace(tensor_sharding(in.model, mesh.group("tp")));
    log.info(
        "[distributed] tp = {}: this rank holds its slice of the attention heads, MLP hidden units and vocabulary "
        "({}); the ranks of a tp group see the same batch",
        in.tensors->size(), describe_held(in.model, names_of(in.model.tensor_shards())));
  }
  // Every chunk of a pipeline stage runs a forward per micro-batch.
  const int64_t forwards = job.train.grad_accum_steps * (in.stages.pipeline ? in.stages.pipeline->chunks() : 1);
  std::unique_ptr<ParallelModel> out = data_parallel_model(runtime, in, forwards);
  if (experts) {
    out = std::make_unique<GroupParallel>(std::move(out), std::move(*experts), "ep/exchange_seconds",
                                          [group = in.experts] { return group->take_seconds(); });
  }
  if (tensors) {
    out = std::make_unique<GroupParallel>(std::move(out), std::move(*tensors), "tp/exchange_seconds",
                                          [group = in.tensors] { return group->take_seconds(); });
  }
  if (in.stages.pipeline) {
    out = std::make_unique<PipelineParallel>(std::move(out), *in.stages.stage, std::move(in.stages.pipeline),
                                             mesh.group("pp"));
  }
  return out;
}

}  // namespace kforge::parallel
