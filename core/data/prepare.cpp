// prepare_data: an optional counting pass (for the train/eval split), then the encoding pass; both read the
// inputs in chunks through run_in_order, so neither holds an input whole and the output is the same for any
// thread count.
#include "data/prepare.h"

#include <fmt/format.h>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "data/chunk_encoder.h"
#include "data/file_hash.h"
#include "data/input_stream.h"
#include "data/ordered_pool.h"
#include "data/progress.h"
#include "data/token_shards.h"
#include "data/tokenizer.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/version.h"

namespace kforge::data {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kProgressMinBytes = 4u << 20;

// What one pass over the inputs found.
struct PassTally {
  int64_t documents = 0, skipped_lines = 0, empty_documents = 0, tokens = 0;
  uint64_t text_bytes = 0;
  std::vector<int64_t> documents_per_input, skipped_per_input;
  std::vector<InputSummary> summaries;
};

constexpr int kBadLinesShown = 5;

// User + system CPU time of every thread of the process so far.
double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

std::string no_text_message(const PrepareOptions& o) {
  return o.skip_bad_lines ? "the input files hold no document (every line is blank, bad or an empty text)"
                          : "the input files hold no text (every line is blank)";
}

// Reads every input once through run_in_order, encoding with `how` (or only counting), and hands each chunk
// to on_chunk in input order. A bad JSON Lines line throws naming file and line unless skip_bad_lines; then
// the first few are shown (when `warn`) and all counted.
PassTally run_prepare_pass(const PrepareOptions& o, const std::vector<InputFormat>& formats, int threads,
                           const ChunkEncoding& how, const std::string& label, uint64_t total_bytes, bool warn,
                           const std::function<void(const EncodedChunk&)>& on_chunk) {
  PassTally tally;
  tally.documents_per_input.assign(o.inputs.size(), 0);
  tally.skipped_per_input.assign(o.inputs.size(), 0);
  DocumentChunks chunks(o.inputs, formats, o.split, o.chunk_bytes, o.read_bytes);
  Progress progress(label, total_bytes, o.progress && total_bytes >= kProgressMinBytes);
  OrderedPoolSteps steps;
  steps.produce = [&](TextChunk& chunk) { return chunks.next(chunk); };
  steps.work = [&](const TextChunk& chunk) { return encode_chunk(chunk, formats[chunk.input], how); };
  steps.consume = [&](EncodedChunk& chunk) {
    const fs::path& input = o.inputs[chunk.input];
    for (const BadLine& bad : chunk.bad_lines) {
      if (!o.skip_bad_lines) {
        throw sdk::Error(
            fmt::format("input '{}' line {}: {}; {}", input.string(), bad.line, bad.reason, o.bad_line_advice));
      }
      if (warn && tally.skipped_lines < kBadLinesShown) {
        fmt::print(stderr, "warning: skipping input '{}' line {}: {}\n", input.string(), bad.line, bad.reason);
      }
      ++tally.skipped_lines;
      ++tally.skipped_per_input[chunk.input];
    }
    tally.documents += chunk.documents;
    tally.documents_per_input[chunk.input] += chunk.documents;
    tally.empty_documents += chunk.empty_documents;
    tally.tokens += static_cast<int64_t>(chunk.tokens.size());
    tally.text_bytes += chunk.text_bytes;
    on_chunk(chunk);
    progress.update(chunk.input_position, tally.text_bytes, tally.tokens);
  };
  run_in_order(threads, 2 * static_cast<size_t>(threads) + 2, steps);
  progress.finish();
  if (warn && tally.skipped_lines > kBadLinesShown) {
    fmt::print(stderr, "warning: skipped {} bad lines in all (the first {} shown)\n", tally.skipped_lines,
               kBadLinesShown);
  }
  tally.summaries = chunks.summaries();
  return tally;
}

void prepare_split_dir(const fs::path& dir, bool overwrite) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw sdk::Error(fmt::format("cannot create '{}': {}", dir.string(), ec.message()));
  std::vector<fs::path> stale;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".npy") stale.push_back(e.path());
  }
  if (stale.empty()) return;
  if (!overwrite) {
    throw sdk::Error(fmt::format("'{}' already holds .npy shards (e.g. {}); a training run would read them together "
                                 "with the new ones. Choose an empty --output or pass --overwrite",
                                 dir.string(), stale.front().filename().string()));
  }
  for (const auto& p : stale) fs::remove(p);
}

void check_writable(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    throw sdk::Error(fmt::format("output directory '{}' cannot be created{}{}", dir.string(), ec ? ": " : "",
                                 ec ? ec.message() : " (a file of that name exists)"));
  }
  const fs::path probe = dir / ".kforge_write_test";
  {
    std::ofstream out(probe);
    if (!out || !(out << "ok")) {
      throw sdk::Error(fmt::format("output directory '{}' is not writable; choose another --output", dir.string()));
    }
  }
  fs::remove(probe, ec);
}

}  // namespace

PrepareResult prepare_data(const PrepareOptions& o) {
  // ---- validate -------------------------------------------------------------------------------
  if (o.inputs.empty()) throw sdk::ConfigError("no input text: give one or more --input FILE");
  uint64_t total_bytes = 0;
  std::vector<InputFormat> formats;
  for (const auto& p : o.inputs) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw sdk::Error(fmt::format("input '{}' does not exist", p.string()));
    if (!fs::is_regular_file(p, ec)) throw sdk::Error(fmt::format("input '{}' is not a regular file", p.string()));
    total_bytes += fs::file_size(p);
    formats.push_back(o.format.value_or(format_from_name(p)));
  }
  if (o.train_tokenizer == !o.tokenizer.empty()) {
    throw sdk::ConfigError("give exactly one of --train-tokenizer (with --vocab-size N) or --tokenizer FILE");
  }
  if (o.train_tokenizer && o.vocab_size <= 0) {
    throw sdk::ConfigError("--train-tokenizer needs --vocab-size N (e.g. 8000, or 32000 for a large corpus)");
  }
  if (!(o.eval_fraction >= 0.0 && o.eval_fraction < 1.0)) {
    throw sdk::ConfigError(fmt::format("--eval-fraction {} must be in [0, 1)", o.eval_fraction));
  }
  if (o.shard_tokens < 1) throw sdk::ConfigError(fmt::format("--shard-tokens {} must be >= 1", o.shard_tokens));
  if (o.threads < 0) throw sdk::ConfigError(fmt::format("--threads {} must be >= 1 (or 0: every core)", o.threads));
  if (o.text_field.empty()) throw sdk::ConfigError("--text-field must name a JSON member (e.g. text)");
  check_writable(o.output);
  const fs::path train_dir = o.output / "train", eval_dir = o.output / "eval";
  const fs::path train_index_dir = o.output / "doc_index" / "train", eval_index_dir = o.output / "doc_index" / "eval";
  for (const auto& dir : {train_dir, eval_dir, train_index_dir, eval_index_dir}) prepare_split_dir(dir, o.overwrite);

  // ---- tokenizer ------------------------------------------------------------------------------
  fs::path model = o.tokenizer;
  if (o.train_tokenizer) {
    for (size_t i = 0; i < o.inputs.size(); ++i) {
      const std::string compression = InputStream(o.inputs[i]).compression();
      if (formats[i] != InputFormat::text || compression != "none") {
        throw sdk::ConfigError(fmt::format(
            "--train-tokenizer reads plain uncompressed text, and input '{}' is {}{}; train the tokenizer on a "
            "plain text sample and pass it with --tokenizer",
            o.inputs[i].string(), formats[i] == InputFormat::jsonl ? "JSON Lines" : "text",
            compression == "none" ? "" : ", " + compression + "-compressed"));
      }
    }
    fmt::print(stderr, "training a {} tokenizer with {} pieces on {:.1f} MB of text...\n", o.model_type, o.vocab_size,
               total_bytes / 1e6);
    TokenizerTrainOptions t;
    t.inputs = o.inputs;
    t.model_prefix = o.output / "tokenizer";
    t.vocab_size = o.vocab_size;
    t.model_type = o.model_type;
    model = train_tokenizer(t);
  }
  const Tokenizer tok(model);
  if (tok.eos_id() < 0) {
    throw sdk::Error(fmt::format("tokenizer '{}' has no end-of-sequence piece; documents could not be separated",
                                 model.string()));
  }
  PrepareResult r;
  r.tokenizer = fs::absolute(model).lexically_normal();
  r.tokenizer_kind = tok.kind();
  r.vocab_size = tok.vocab_size();
  r.eos_id = tok.eos_id();
  r.dtype = dtype_for_vocab(r.vocab_size);
  r.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));

  // ---- pass 1: count documents (only to place the train/eval split) -----------------------------
  ChunkEncoding how;
  how.eos_id = tok.eos_id();
  how.text_field = o.text_field;
  int64_t n_train = std::numeric_limits<int64_t>::max(), counted = -1;
  bool warned = false;
  if (o.eval_fraction > 0.0) {
    const PassTally count = run_prepare_pass(o, formats, r.threads, how, "counting documents", total_bytes, true,
                                             [](const EncodedChunk&) {});
    warned = true;
    counted = count.documents;
    if (counted == 0) throw sdk::Error(no_text_message(o));
    int64_t n_eval = 0;
    if (counted >= 2) {
      n_eval = std::clamp<int64_t>(std::llround(o.eval_fraction * static_cast<double>(counted)), 1, counted - 1);
    } else {
      fmt::print(stderr, "warning: only one document in the input; eval/ stays empty (split text with blank lines)\n");
    }
    n_train = counted - n_eval;
  }

  // ---- pass 2: encode -------------------------------------------------------------------------
  how.tokenizer = &tok;
  TokenShards train(train_dir, train_index_dir, r.dtype, o.shard_tokens),
      eval(eval_dir, eval_index_dir, r.dtype, o.shard_tokens);
  int64_t doc = 0;
  const auto started = std::chrono::steady_clock::now();
  const double cpu_started = process_cpu_seconds();
  const PassTally pass =
      run_prepare_pass(o, formats, r.threads, how, "encoding", total_bytes, !warned, [&](const EncodedChunk& chunk) {
        const int* ids = chunk.tokens.data();
        for (const int64_t n : chunk.document_tokens) {
          (doc++ < n_train ? train : eval).append_document(ids, static_cast<size_t>(n));
          ids += n;
        }
      });
  train.close();
  eval.close();
  r.encode_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.encode_cpu_seconds = process_cpu_seconds() - cpu_started;
  if (pass.documents == 0) throw sdk::Error(no_text_message(o));
  if (counted >= 0 && pass.documents != counted) {
    throw sdk::Error(fmt::format("the inputs changed while being read: {} documents counted, then {} encoded", counted,
                                 pass.documents));
  }
  r.train_documents = train.documents();
  r.eval_documents = eval.documents();
  r.train_tokens = train.tokens();
  r.eval_tokens = eval.tokens();
  r.train_shards = train.files();
  r.eval_shards = eval.files();
  r.skipped_lines = pass.skipped_lines;
  r.empty_documents = pass.empty_documents;
  r.text_bytes = pass.text_bytes;

  // ---- metadata -------------------------------------------------------------------------------
  auto relative = [&](const std::vector<fs::path>& files) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& f : files) a.push_back(fs::relative(f, o.output).string());
    return a;
  };
  nlohmann::json sources = nlohmann::json::array();
  for (size_t i = 0; i < o.inputs.size(); ++i) {
    sources.push_back({{"path", fs::absolute(o.inputs[i]).lexically_normal().string()},
                       {"bytes", fs::file_size(o.inputs[i])},
                       {"format", formats[i] == InputFormat::jsonl ? "jsonl" : "text"},
                       {"compression", pass.summaries[i].compression},
                       {"text_bytes", pass.summaries[i].text_bytes},
                       {"documents", pass.documents_per_input[i]},
                       {"skipped_lines", pass.skipped_per_input[i]}});
  }
  const nlohmann::json meta{
      {"format", "kforge-tokens-v1"},
      {"kforge_version", KFORGE_SDK_VERSION},
      {"tokenizer", r.tokenizer.string()},
      {"tokenizer_kind", tok.kind()},
      {"tokenizer_xxh3_64", file_xxh3(r.tokenizer)},
      {"tokenizer_trained", o.train_tokenizer},
      {"model_type", o.train_tokenizer ? o.model_type : ""},
      {"vocab_size", r.vocab_size},
      {"eos_id", r.eos_id},
      {"bos_id", tok.bos_id()},
      {"unk_id", tok.unk_id()},
      {"dtype", dtype_name(r.dtype)},
      {"documents", {{"train", r.train_documents}, {"eval", r.eval_documents}}},
      {"tokens", {{"train", r.train_tokens}, {"eval", r.eval_tokens}}},
      {"shards", {{"train", relative(r.train_shards)}, {"eval", relative(r.eval_shards)}}},
      {"document_index",
       {{"train", relative(train.index_files())},
        {"eval", relative(eval.index_files())},
        {"dtype", "int64"},
        {"contents", "per shard, the offset in that shard of the first token of each document that starts in it"},
        {"documents_span_shards", true}}},
      {"shard_tokens", o.shard_tokens},
      {"eval_fraction", o.eval_fraction},
      {"document_split", o.split == DocumentSplit::paragraphs ? "paragraphs" : "lines"},
      {"text_field", o.text_field},
      {"skipped_lines", r.skipped_lines},
      {"empty_documents", r.empty_documents},
      {"sources", sources},
  };
  r.metadata = o.output / "metadata.json";
  std::ofstream out(r.metadata);
  out << meta.dump(2) << "\n";
  if (!out) throw sdk::Error(fmt::format("cannot write '{}'", r.metadata.string()));
  return r;
}

}  // namespace kforge::data
