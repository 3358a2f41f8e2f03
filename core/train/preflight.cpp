// preflight: the build-time checks of a run, without the model (and a process group only to tokenise a
// Hugging Face export).
#include "train/preflight.h"

#include <fmt/format.h>

#include "config/rules.h"
#include "config/support_check.h"
#include "data/data_error.h"
#include "dist/device.h"
#include "dist/rank_info.h"
#include "feed/image_text_feed.h"
#include "feed/packing.h"
#include "kforge/sdk/abi.h"
#include "kforge/sdk/error.h"
#include "parallel/pipeline_order.h"
#include "parallel/precision.h"
#include "train/task_evaluation.h"

namespace kforge::train {
namespace {

// What a vision-language run cannot combine with its image-text data (read by ImageTextFeed, not here).
void check_vision_language_data(const config::JobConfig& job) {
  const config::Value& data = *job.tree.find("data");
  auto refuse_if = [&](bool asked, const char* key, const std::string& why) {
    if (!asked) return;
    const config::Value* v = data.find(key);
    throw sdk::ConfigError(fmt::format("{}: [data] {} in a vision-language run ([vlm]): {}",
                                       v != nullptr ? v->source.describe() : "config", key, why));
  };
  refuse_if(!job.data.datasets.empty(), "datasets",
            "kforge mixes text datasets only; give one image-text dataset_path");
  refuse_if(job.data.hf.has_value() && job.view("data").get_bool("hf_streaming"), "hf_streaming",
            "a Hugging Face image-text dataset is read map-style, as KempnerForge's HuggingFaceVLMDataset reads it; "
            "remove the key");
  refuse_if(job.view("data").get_bool("pack_sequences"), "pack_sequences",
            "each row is one image and its text, padded; nothing to pack");
  const config::Value* type = data.find("dataset_type");
  refuse_if(type != nullptr && !type->source.origin.empty(), "dataset_type",
            "the image-text dataset plugin is [vlm] dataset; remove the key");
  const config::Value* video = job.tree.find("video");
  auto given = [](const config::Value* v) { return v != nullptr && !v->source.origin.empty(); };
  for (const char* key : {"hf_dataset_image_field", "hf_dataset_prompt_field"}) {
    refuse_if(!job.data.hf && given(data.find(key)), key,
              "names a column of the [data] hf_dataset_name dataset, which is not set (WebDataset shards and a "
              "manifest have fixed fields); remove the key");
  }
  if (job.eval.enabled && job.eval.hf.has_value()) {
    throw sdk::ConfigError(
        fmt::format("{}: [eval] hf_dataset_name in a vision-language run ([vlm]): kforge evaluates on the {} in [eval] "
                    "dataset_path",
                    job.eval.hf->where,
                    video != nullptr ? "clips" : "image-text data of WebDataset .tar shards or a JSON Lines manifest"));
  }
  if (video != nullptr) {
    for (const char* key : {"dataset_path", "file_pattern", "hf_dataset_name"}) {
      refuse_if(given(data.find(key)), key,
                "a video run reads its clips from [video] data_root through the [video] dataset_type plugin; "
                "remove the key");
    }
    refuse_if(given(data.find("hf_image_size")), "hf_image_size",
              "a video run resizes its frames to [video] frame_size; remove the key");
    if (const config::Value* dataset = job.tree.find("vlm")->find("dataset"); given(dataset)) {
      throw sdk::ConfigError(
          fmt::format("{}: [vlm] dataset in a video run ([video]): the clips are read by the "
                      "[video] dataset_type plugin; remove the key",
                      dataset->source.describe()));
    }
    const config::Value* pattern = job.tree.find("eval")->find("file_pattern");
    if (job.eval.enabled && given(pattern)) {
      throw sdk::ConfigError(fmt::format(
          "{}: [eval] file_pattern in a video run ([video]): the [video] dataset_type plugin reads the eval clips "
          "at [eval] dataset_path by its own layout; remove the key",
          pattern->source.describe()));
    }
    return;  // the [video] dataset_type plugin finds the training clips from its own keys, the eval clips at
             // [eval] dataset_path
  }
  if (job.data.hf) {
    feed::hf_image_text(job);  // its files are found now; their columns are read as the feed opens
  } else {
    feed::image_text_path(job, feed::ImageTextFeed::Split::Train);
  }
}

// [data] keys only a vision-language run reads, set in a text run's config: one warning each.
void warn_image_keys(const config::JobConfig& job, std::vector<std::string>& warnings) {
  const config::Value& data = *job.tree.find("data");
  const bool streamed = data.find("hf_streaming")->b;
  for (const char* key :
       {"num_workers", "prefetch_factor", "hf_image_size", "hf_dataset_image_field", "hf_dataset_prompt_field"}) {
    const config::Value* v = data.find(key);
    // A stream tokenises on num_workers threads, read ahead by prefetch_factor.
    if (v == nullptr || v->source.origin.empty() || (streamed && std::string(key).rfind("hf_", 0) != 0)) continue;
    warnings.push_back(
        fmt::format("{}: [data] {} = {}: has no effect in a text run (it is read by the image-text data "
                    "of a [vlm] run; the memory-mapped shards are read in the training process)",
                    v->source.describe(), key, v->to_toml_brief()));
  }
}

// [time_embedding] keys set beside type = "none", which builds no time embedding: one warning each.
void warn_inert_time_embedding_keys(const config::JobConfig& job, std::vector<std::string>& warnings) {
  const config::Value* section = job.tree.find("time_embedding");
  if (section == nullptr || section->find("type")->s != "none") return;
  for (const char* key : {"num_bands", "min_period", "max_period"}) {
    const config::Value* v = section->find(key);
    if (v == nullptr || v->source.origin.empty()) continue;
    warnings.push_back(fmt::format(
        "{}: [time_embedding] {} = {}: has no effect with type = \"none\" (no time embedding is built; set type = "
        "\"sinusoidal\" to use it)",
        v->source.describe(), key, v->to_toml_brief()));
  }
}

// Where [distributed] `key` was set ("<file>:<line>", or "config" for the default).
std::string distributed_origin(const config::JobConfig& job, const char* key) {
  const config::Value* section = job.tree.find("distributed");
  const config::Value* value = section != nullptr ? section->find(key) : nullptr;
  return value != nullptr ? value->source.describe() : "config";
}

// The pipeline keys set with pp = 1, which has one stage: one warning each.
void warn_inert_pipeline_keys(const config::JobConfig& job, std::vector<std::string>& warnings) {
  const config::Value* section = job.tree.find("distributed");
  if (section == nullptr || job.distributed.pp > 1) return;
  for (const char* key : {"pp_schedule", "pp_layer_split", "virtual_stages"}) {
    const config::Value* v = section->find(key);
    if (v == nullptr || v->source.origin.empty()) continue;
    warnings.push_back(
        fmt::format("{}: [distributed] {} = {}: has no effect with pp = 1 (one pipeline stage; set pp > 1 to use it)",
                    v->source.describe(), key, v->to_toml_brief()));
  }
}

// In a vision-language run, [distributed] `key` = `size` > 1 also needs a [vlm] arch that declares `capability`
// (`flag`): one that passes the split on to the text model whose blocks it runs.
void check_strategy_parallel(const config::JobConfig& job, const plugins::Components& components, const char* key,
                             int64_t size, uint32_t flag, const char* capability) {
  if (job.tree.find("vlm") == nullptr || (components.modality_strategy_capabilities() & flag) != 0) return;
  throw sdk::ConfigError(fmt::format(
      "{}: [distributed] {} = {} in a vision-language run: [vlm] arch = \"{}\" does not declare the {} capability "
      "(its blocks are not the text model's, which kforge splits); set {} = 1 or use an arch that does (kforge "
      "list-plugins shows capabilities)",
      distributed_origin(job, key), key, size, job.view("vlm").get_string("arch"), capability, key));
}

// [distributed] ep > 1 needs a model that shards its experts (and, with [vlm], an arch that lets it).
void check_expert_parallel(const config::JobConfig& job, const plugins::Components& components) {
  const int64_t ep = job.distributed.ep;
  if (ep <= 1) return;
  const std::string where = distributed_origin(job, "ep");
  check_strategy_parallel(job, components, "ep", ep, KFORGE_CAP_EXPERT_PARALLEL, "expert_parallel");
  if ((components.model_capabilities() & KFORGE_CAP_EXPERT_PARALLEL) == 0) {
    throw sdk::ConfigError(fmt::format(
        "{}: [distributed] ep = {}: model '{}' does not declare the expert_parallel capability (it cannot shard its "
        "experts); set ep = 1 or use a model that does (kforge list-plugins shows capabilities)",
        where, ep, job.view("model").get_string("model_type")));
  }
}

// [distributed] tp > 1 needs a model and a loss that split over the tensor-parallel group (and, with [vlm], an arch
// that lets the model split) and an optimizer that updates slices.
void check_tensor_parallel(const config::JobConfig& job, const plugins::Components& components) {
  const int64_t tp = job.distributed.tp;
  if (tp <= 1) return;
  const std::string where = fmt::format("{}: [distributed] tp = {}", distributed_origin(job, "tp"), tp);
  check_strategy_parallel(job, components, "tp", tp, KFORGE_CAP_TENSOR_PARALLEL, "tensor_parallel");
  if ((components.model_capabilities() & KFORGE_CAP_TENSOR_PARALLEL) == 0) {
    throw sdk::ConfigError(fmt::format(
        "{}: model '{}' does not declare the tensor_parallel capability (it cannot split its layers); set tp = 1 or "
        "use a model that does (kforge list-plugins shows capabilities)",
        where, job.view("model").get_string("model_type")));
  }
  if ((components.loss_capabilities() & KFORGE_CAP_TENSOR_PARALLEL) == 0) {
    throw sdk::ConfigError(fmt::format(
        "{}: loss '{}' does not declare the tensor_parallel capability (it cannot read vocabulary-split logits); set "
        "tp = 1 or use a loss that does (kforge list-plugins shows capabilities)",
        where, job.view("train").get_string("loss_fn")));
  }
  if ((components.optimizer_capabilities() & KFORGE_CAP_NEEDS_WHOLE_MATRICES) != 0) {
    throw sdk::ConfigError(fmt::format(
        "{}: optimizer '{}' updates whole weight matrices, and under tensor parallelism each rank holds slices of "
        "them; set tp = 1 or use an optimizer without the needs_whole_matrices capability (kforge list-plugins "
        "shows capabilities)",
        where, job.view("optimizer").get_string("name")));
  }
}

// [train] mixed_precision = "fp8" needs a text model that computes its linear layers in float8.
void check_float8(const config::JobConfig& job, const plugins::Components& components) {
  if (job.train.mixed_precision != "fp8") return;
  if (job.tree.find("vlm") != nullptr) {
    throw sdk::ConfigError(
        "[train] mixed_precision = \"fp8\" in a vision-language run ([vlm]): kforge computes the linear layers of text "
        "models in float8 only so far; set \"bf16\"");
  }
  if ((components.model_capabilities() & KFORGE_CAP_FLOAT8) == 0) {
    throw sdk::ConfigError(fmt::format(
        "[train] mixed_precision = \"fp8\": model '{}' does not declare the float8 capability (it cannot compute its "
        "linear layers in float8); set \"bf16\" or use a model that does (kforge list-plugins shows capabilities)",
        job.view("model").get_string("model_type")));
  }
}

void check_pipeline_parallel(const config::JobConfig& job, const plugins::Components& components) {
  const int64_t pp = job.distributed.pp;
  if (pp <= 1) return;
  const std::string where = fmt::format("{}: [distributed] pp = {}", distributed_origin(job, "pp"), pp);
  if ((components.model_capabilities() & KFORGE_CAP_PIPELINE) == 0) {
    throw sdk::ConfigError(fmt::format(
        "{}: model '{}' does not declare the pipeline capability (it cannot run as stages); set pp = 1 or use a model "
        "that does (kforge list-plugins shows capabilities)",
        where, job.view("model").get_string("model_type")));
  }
  // The schedule orders this many micro-batches on every rank (it refuses too few, naming the keys) without deadlock;
  // the orders' size is checked first, since they take memory in proportion to it.
  const std::unique_ptr<sdk::PipelineSchedule> schedule = components.pipeline_schedule();
  const std::string name = job.view("distributed").get_string("pp_schedule");
  parallel::check_pipeline_size(pp, schedule->chunks(), job.train.grad_accum_steps, name);
  std::vector<std::vector<sdk::PipelinePass>> orders;
  const int micro_batches = static_cast<int>(job.train.grad_accum_steps);
  for (int r = 0; r < pp; ++r) orders.push_back(schedule->order(static_cast<int>(pp), r, micro_batches));
  parallel::check_pipeline_orders(orders, schedule->chunks(), micro_batches, name);
}

// The training and eval data of a text run, opened into `out` (a Hugging Face export through its token cache).
void open_text_data(const config::JobConfig& job, const plugins::Components& components,
                    const feed::HfCacheGroup& hf_group, Preflight& out) {
  // Shards in `path`, or a Hugging Face export's token cache; null (the dry run) while that is not written.
  // The dataset refuses ids past [model] vocab_size as it opens (DatasetSpec::vocab_size), so that no window the run
  // may draw fails in the embedding; its errors are data errors, named by `what`.
  const auto open = [&](const std::string& what, const std::string& path, const std::string& pattern,
                        const std::optional<config::HfExport>& hf) -> std::unique_ptr<sdk::Dataset> {
    const int64_t vocab_size = job.view("model").get_int("vocab_size");
    try {
      if (!hf) return components.dataset(path, pattern, vocab_size);
      if (const std::optional<feed::ShardDir> cache = feed::hf_shards(job, *hf, hf_group)) {
        return components.dataset(cache->dir, cache->pattern, vocab_size);
      }
    } catch (const sdk::ConfigError&) {
      throw;
    } catch (const sdk::Error& e) {
      throw data::DataError(fmt::format("{}: {}", what, e.what()));
    }
    out.warnings.push_back(
        fmt::format("{}: not tokenised yet: the run tokenises it into its token cache first", hf->where));
    return nullptr;
  };
  if (!job.data.datasets.empty()) {
    std::vector<data::MixtureDataset::Source> sources;
    for (const config::DatasetSource& s : job.data.datasets) {
      const std::string what = fmt::format("[[data.datasets]] '{}'", s.name);
      if (auto dataset = open(what, s.path, job.data.file_pattern, s.hf)) {
        sources.push_back({s.name, std::move(dataset)});
      }
    }
    if (sources.size() == job.data.datasets.size()) {
      auto mixture = std::make_unique<data::MixtureDataset>(std::move(sources));
      out.mixture = mixture.get();
      out.train_data = std::move(mixture);
    }
  } else if (job.data.dataset_path.empty() && !job.data.hf) {
    throw sdk::ConfigError(
        "[data] dataset_path is not set: point it at a directory of tokenised shards (make one with "
        "`kforge prepare-data --input FILE.txt --output DIR --train-tokenizer --vocab-size 8000`), or set "
        "hf_dataset_name to a Hugging Face dataset exported to JSON Lines");
  } else if (job.view("data").get_bool("hf_streaming")) {
    feed::hf_export_inputs(job, *job.data.hf);  // streamed by the feed, never cached: only the export is checked
  } else {
    out.train_data = open("train data", job.data.dataset_path, job.data.file_pattern, job.data.hf);
  }
  if (job.eval.enabled && (!job.eval.dataset_path.empty() || job.eval.hf)) {  // else [eval] tasks only
    out.eval_data = open("eval data", job.eval.dataset_path, job.eval.file_pattern, job.eval.hf);
  }
}

}  // namespace

Preflight preflight(const config::JobConfig& job, const plugins::Components& components, int world_size,
                    const feed::HfCacheGroup& hf_group) {
  Preflight out;
  out.warnings = config::check_support(job.tree, job.schema);
  check_expert_parallel(job, components);  // before the world size, so a one-process dry run checks it too
  check_tensor_parallel(job, components);
  check_pipeline_parallel(job, components);
  config::check_world(job, world_size);
  check_eval_tasks(job);
  check_float8(job, components);
  parallel::autocast_dtype(job.train.mixed_precision);  // refuses what kforge cannot train in
  // Refuses [train] device = "cuda" where this process has no GPU of its own (or kforge is a CPU build).
  dist::choose_device(job.train.device, dist::rank_info_from_env().local_rank, dist::probe_cuda());
  // An optimizer checks its [optimizer] values (betas, Muon's, Schedule-Free's, a third party's)
  // when it is built: build it once over a stand-in, so the dry run refuses what the run would.
  components.check_optimizer_values();
  config::check_mixture(job.tree);
  warn_inert_time_embedding_keys(job, out.warnings);
  warn_inert_pipeline_keys(job, out.warnings);
  if (job.tree.find("vlm") != nullptr) {
    check_vision_language_data(job);
    return out;
  }
  warn_image_keys(job, out.warnings);
  // Data that cannot be read or holds ids past the vocabulary is refused before any step, as a config is (exit 2).
  try {
    open_text_data(job, components, hf_group, out);
  } catch (const sdk::ConfigError&) {
    throw;
  } catch (const data::DataError&) {
    throw;
  } catch (const sdk::Error& e) {
    throw data::DataError(e.what());
  }
  out.eos_id = feed::packing_eos_id(job, components.model_capabilities());
  return out;
}

}  // namespace kforge::train
