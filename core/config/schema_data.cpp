// The [data] and [eval] sections of the schema: shards, Hugging Face sources, mixtures and phases.
#include "config/schema_keys.h"
#include "config/schema_sections.h"

namespace kforge::config::schema_parts {
namespace {

const SectionSpec& dataset_source_schema() {
  static const SectionSpec source{"data.datasets",
                                  {string_key("path", "", "pre-tokenised directory of this source"),
                                   float_key("weight", 1.0, "mixture weight (> 0)"),
                                   string_key("name", "", "metric name; falls back to path or hf_name"),
                                   string_key("hf_name", "", "Hugging Face dataset id"),
                                   string_key("hf_config", "", "Hugging Face dataset config")}};
  return source;
}

const SectionSpec& phase_schema() {
  static const SectionSpec phase{"data.phases",
                                 {int_key("start_step", 0, "step at which this phase starts"),
                                  dict_key("dataset_weights", "mixture weights by dataset name for this phase"),
                                  float_key("lr_scale", 1.0, "multiplier of every learning rate in this phase")}};
  return phase;
}

}  // namespace

std::vector<SectionSpec> data_sections() {
  std::vector<SectionSpec> s;
  s.push_back({"data",
               {string_key("dataset_path", "", "directory of pre-tokenised shards"),
                string_key("file_pattern", "*.npy", "glob of shard file names"),
                string_key("tokenizer_path", "", "SentencePiece .model, BPE tokenizer.json or .tiktoken"),
                string_key("dataset_type", "memmap", "dataset plugin"),
                bounded(int_key("num_workers", 4, "data-loading workers"), kMaxThreads),
                bool_key("pin_memory", true, "pin host memory (GPU builds)"),
                bounded(int_key("prefetch_factor", 2, "batches prefetched per worker"), kMaxPrefetchFactor),
                optional_key(KeyType::String, "hf_dataset_name", "Hugging Face dataset id"),
                optional_key(KeyType::String, "hf_dataset_config", "Hugging Face dataset config"),
                string_key("hf_dataset_split", "train", "Hugging Face split"),
                string_key("hf_dataset_text_field", "text", "text column"),
                string_key("hf_dataset_image_field", "image", "image column (VLM)"),
                string_key("hf_dataset_prompt_field", "", "prompt column (VLM)"),
                int_key("hf_image_size", 224, "image size (VLM)"),
                bool_key("hf_streaming", false,
                         "stream the hf_dataset_name export: read, shuffled and tokenised on the fly, no token cache"),
                int_key("hf_streaming_shuffle_buffer", 10000, "documents the stream shuffles among"),
                bool_key("pack_sequences", false, "document-aware attention masking"),
                table_list_key("datasets", &dataset_source_schema(), "mixture sources ([[data.datasets]])"),
                float_key("mix_temperature", 1.0, "mixture temperature (p ~ w^(1/T))"),
                table_list_key("phases", &phase_schema(), "training phases ([[data.phases]])"),
                int_key("anneal_start_step", 0, "shortcut for one annealing phase (0: off)"),
                dict_key("anneal_weights", "mixture weights of the annealing phase")},
               false,
               "training data; dataset_type picks the dataset plugin"});
  s.push_back({"eval",
               {bool_key("enabled", false, "run evaluation during training"),
                int_key("interval", 1000, "steps between evaluations"), int_key("steps", 50, "batches per evaluation"),
                string_key("dataset_path", "", "directory of pre-tokenised eval shards"),
                string_key("file_pattern", "*.npy", "glob of eval shard names"),
                optional_key(KeyType::String, "hf_dataset_name", "Hugging Face eval dataset"),
                optional_key(KeyType::String, "hf_dataset_config", "Hugging Face eval config"),
                string_key("hf_dataset_split", "validation", "Hugging Face eval split"),
                string_list_key("tasks", {}, "downstream tasks scored at each evaluation (docs/how-to/downstream-eval.md)"),
                string_key("task_dir", "", "the directory holding the tasks' directories"),
                int_key("task_limit", 0, "documents scored per task (0: all)"),
                int_key("seed", 1234, "seed of the tasks' few-shot sampler")},
               false,
               "periodic evaluation (loss and perplexity, downstream tasks)"});
  return s;
}

}  // namespace kforge::config::schema_parts
