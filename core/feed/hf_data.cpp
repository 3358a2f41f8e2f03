// hf_data: a Hugging Face export's token cache: found by its key, written once by rank 0, read by all.
#include "feed/hf_data.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "config/hub_cache.h"
#include "data/arrow_stream.h"
#include "data/datasets_cache.h"
#include "data/file_hash.h"
#include "data/hf_export.h"
#include "data/prepare.h"
#include "kforge/sdk/error.h"
#include "listing/listing_cache.h"
#include "log/log.h"

namespace kforge::feed {
namespace {

namespace fs = std::filesystem;

// <name>[-<config>]-<split>-<key>, from the export's last path component, in characters a file name keeps.
std::string hf_cache_name(const config::HfExport& hf, const std::string& key) {
  fs::path name(hf.name);
  if (!name.has_filename()) name = name.parent_path();
  std::string label = name.filename().string() + (hf.config.empty() ? "" : "-" + hf.config) + "-" + hf.split;
  for (char& c : label) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  return label + "-" + key;
}

bool is_arrow(const fs::path& file) { return file.extension() == ".arrow"; }

// The export's files, Arrow or JSON Lines, prefixed with the config key when they cannot be read.
std::vector<fs::path> export_files(const config::JobConfig& job, const config::HfExport& hf) {
  if (job.data.tokenizer_path.empty()) {
    throw sdk::ConfigError(
        fmt::format("{}: a Hugging Face export is tokenised with [data] tokenizer_path, which is not set: set it to a "
                    "SentencePiece .model, a tokenizer.json or a .tiktoken file",
                    hf.where));
  }
  return hf_split_files(hf);
}

// Writes the text column of each Arrow file of `files` as JSON Lines beside the cache `dir` (the temporary files go
// into `temporaries`) and returns the files prepare-data reads in its place.
std::vector<fs::path> arrow_as_jsonl(const config::HfExport& hf, const std::vector<fs::path>& files,
                                     const fs::path& dir, std::vector<fs::path>& temporaries) {
  std::vector<fs::path> inputs;
  for (const fs::path& file : files) {
    if (!is_arrow(file)) {
      inputs.push_back(file);
      continue;
    }
    const fs::path jsonl = dir.parent_path() / fmt::format("{}.partial-{}-arrow-{}.jsonl", dir.filename().string(),
                                                           ::getpid(), temporaries.size());
    temporaries.push_back(jsonl);
    std::ofstream out(jsonl, std::ios::binary);
    const data::ArrowTextCount n = data::read_arrow_texts(file, hf.text_field, [&](std::string_view text) {
      try {
        out << nlohmann::json{{hf.text_field, std::string(text)}}.dump() << '\n';
      } catch (const nlohmann::json::exception&) {
        throw sdk::Error(fmt::format("Arrow file '{}': a value of column '{}' is not valid UTF-8", file.string(),
                                     hf.text_field));
      }
    });
    if (!out.flush()) throw sdk::Error(fmt::format("cannot write '{}'", jsonl.string()));
    log::get().info("{}: {}: {} rows, {} null values of '{}' skipped", hf.where, file.string(), n.rows, n.nulls,
                    hf.text_field);
    inputs.push_back(jsonl);
  }
  return inputs;
}

// Tokenises `files` into `dir` through a temporary sibling renamed into place, so a cache that exists is whole.
void write_hf_cache(const config::JobConfig& job, const config::HfExport& hf, const std::vector<fs::path>& files,
                    const fs::path& dir) {
  const fs::path partial = dir.parent_path() / fmt::format("{}.partial-{}", dir.filename().string(), ::getpid());
  fs::remove_all(partial);
  std::vector<fs::path> temporaries;  // JSON Lines copies of Arrow text columns, removed once tokenised
  const struct Remove {
    std::vector<fs::path>& files;
    ~Remove() {
      std::error_code ignored;
      for (const fs::path& f : files) fs::remove(f, ignored);
    }
  } remove{temporaries};
  data::PrepareOptions o;
  o.output = partial;
  o.tokenizer = job.data.tokenizer_path;
  o.eval_fraction = 0;
  o.format = data::InputFormat::jsonl;
  o.text_field = hf.text_field;
  o.bad_line_advice = "fix or remove the line in the export";
  // On failure the half-written directory goes; the error that stopped it is what the user sees,
  // named after the key and of the same kind (a ConfigError still exits 2).
  const auto failed = [&](const std::exception& e) {
    std::error_code ignored;
    fs::remove_all(partial, ignored);
    return fmt::format("{}: tokenising the export failed: {}", hf.where, e.what());
  };
  data::PrepareResult r;
  try {
    o.inputs = arrow_as_jsonl(hf, files, dir, temporaries);
    r = data::prepare_data(o);
  } catch (const sdk::ConfigError& e) {
    throw sdk::ConfigError(failed(e));
  } catch (const std::exception& e) {
    throw sdk::Error(failed(e));
  }
  std::error_code ec;
  fs::rename(partial, dir, ec);
  if (ec) {
    fs::remove_all(partial);
    if (!fs::exists(dir / "metadata.json")) {
      throw sdk::Error(fmt::format("cannot move the token cache {} into place at {}: {}", partial.string(),
                                   dir.string(), ec.message()));
    }
  }
  log::get().info("{}: {} documents, {} tokens ({} skipped lines) in {:.1f} s on {} threads", hf.where,
                  r.train_documents, r.train_tokens, r.skipped_lines, r.encode_seconds, r.threads);
}

}  // namespace

std::vector<fs::path> hf_split_files(const config::HfExport& hf) {
  try {
    std::error_code ec;
    if (fs::exists(hf.name, ec) || !config::is_hub_id(hf.name)) {
      return data::hf_export_files(hf.name, hf.config, hf.split);
    }
    const config::HfCacheDir datasets = config::datasets_cache();
    std::string in_datasets = "nothing (a @revision is looked for in the hub cache only)", in_hub;
    const bool any_revision = hf.name.find('@') == std::string::npos;
    if (auto files = any_revision ? data::datasets_cache_files(datasets.path, hf.name, hf.config, hf.split, in_datasets)
                                  : std::nullopt) {
      log::get().info("{}: the `datasets` cache's {}", hf.where, files->front().parent_path().string());
      return *files;
    }
    if (auto snapshot = config::find_hub_snapshot("dataset", hf.name, in_hub)) {
      log::get().info("{}: the hub cache's {}", hf.where, snapshot->string());
      return data::hf_export_files(*snapshot, hf.config, hf.split);
    }
    const config::HfCacheDir hub = config::hub_cache();
    const std::string config = hf.config.empty() ? "" : ", '" + hf.config + "'";
    throw sdk::ConfigError(fmt::format(
        "'{}' is not a local path, and the local Hugging Face caches do not hold split '{}' of it: looked for {} (the "
        "`datasets` cache, from {}) and {} (the hub cache, from {}). kforge never downloads: on a machine with hub "
        "access run python3 -c \"from datasets import load_dataset; load_dataset('{}'{}, split='{}')\" and copy "
        "{} here (or point $HF_DATASETS_CACHE at a copy), or `huggingface-cli download --repo-type dataset {}` and "
        "copy the hub cache's folder; or save_to_disk('DIR') and name DIR",
        hf.name, hf.split, in_datasets, datasets.origin, in_hub, hub.origin, hf.name, config, hf.split,
        datasets.path.string(), hf.name));
  } catch (const sdk::ConfigError& e) {
    throw sdk::ConfigError(fmt::format("{}: {}", hf.where, e.what()));
  }
}

std::vector<fs::path> hf_export_inputs(const config::JobConfig& job, const config::HfExport& hf) {
  std::vector<fs::path> files = export_files(job, hf);
  for (const fs::path& f : files) {
    if (is_arrow(f)) {
      throw sdk::ConfigError(fmt::format("{}: '{}' is an Arrow file, which [data] hf_streaming does not read (it "
                                         "streams JSON Lines); set hf_streaming = false to tokenise it into the token "
                                         "cache",
                                         hf.where, f.string()));
    }
  }
  return files;
}

std::optional<ShardDir> hf_shards(const config::JobConfig& job, const config::HfExport& hf, const HfCacheGroup& group) {
  const std::vector<fs::path> files = export_files(job, hf);
  const fs::path root = listing::cache_dir();
  if (root.empty()) {
    throw sdk::ConfigError(fmt::format(
        "{}: no directory for its token cache: set KFORGE_CACHE_DIR (neither XDG_CACHE_HOME nor HOME is set)",
        hf.where));
  }
  const std::string key = data::hf_cache_key(files, data::file_xxh3(job.data.tokenizer_path), hf.text_field, hf.split);
  const fs::path dir = root / "hf" / hf_cache_name(hf, key);
  const ShardDir shards{(dir / "train").string(), "tokens_*.npy"};
  const bool ready = fs::exists(dir / "metadata.json");
  if (!group) return ready ? std::optional<ShardDir>(shards) : std::nullopt;
  const dist::Group& g = group();
  auto& log = log::get();
  std::exception_ptr failed;
  if (g.rank() == 0) {
    if (ready) {
      log.info("{}: reading its token cache {} (KFORGE_CACHE_DIR sets where caches go)", hf.where, dir.string());
    } else {
      uintmax_t bytes = 0;
      for (const fs::path& f : files) bytes += fs::file_size(f);
      log.info(
          "{}: tokenising {} file(s) of split '{}' ({:.1f} MB, field '{}') with {} into the token cache {} "
          "(KFORGE_CACHE_DIR sets where caches go); later runs read it",
          hf.where, files.size(), hf.split, static_cast<double>(bytes) / 1e6, hf.text_field, job.data.tokenizer_path,
          dir.string());
      try {
        fs::create_directories(dir.parent_path());
        write_hf_cache(job, hf, files, dir);
      } catch (...) {
        failed = std::current_exception();
      }
    }
  }
  g.barrier();  // the other ranks wait for rank 0's cache
  if (failed) std::rethrow_exception(failed);
  if (!fs::exists(dir / "metadata.json")) {
    throw sdk::Error(fmt::format(
        "{}: rank {} finds no token cache at {} after rank 0 wrote it (rank 0's log says why it did not); ranks on "
        "other hosts need KFORGE_CACHE_DIR on a filesystem every host sees",
        hf.where, g.rank(), dir.string()));
  }
  return shards;
}

}  // namespace kforge::feed
