// kforge prepare-data: tokenise text files into train/eval .npy shards for the memmap dataset, or (--image-text)
// turn an image-text JSON Lines manifest into WebDataset tar shards.
#include <fmt/format.h>

#include <algorithm>
#include <cxxopts.hpp>
#include <functional>
#include <iostream>

#include "cli/command_options.h"
#include "cli/command_tables.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "data/prepare.h"
#include "data/webdataset_writer.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {
namespace {

constexpr const char* kExample = R"(
Inputs are plain text or JSON Lines (--format; by default *.jsonl and *.ndjson are JSON Lines), and may be
gzip, zstd, xz, bzip2 or lz4 compressed (recognised by their content). They are streamed, never loaded
whole. In plain text, documents are separated by blank lines (--documents lines: one per line); in JSON
Lines each line is one document, its --text-field string. Each document is followed by the tokenizer's
EOS id. The last --eval-fraction of the documents goes to OUTPUT/eval, the rest to OUTPUT/train, as
tokens_000.npy, tokens_001.npy, ... of --shard-tokens tokens each (the last one fewer; uint16 for
vocabularies up to 65536, else uint32); documents continue across shards. OUTPUT/doc_index/SPLIT/
tokens_NNN.docs.npy (int64) holds the offsets in shard NNN at which its documents start. --threads
encode in parallel; the output is the same for any number of threads. OUTPUT/metadata.json records the
tokenizer (its kind and XXH3-64 hash), vocabulary, dtype, token and document counts, skipped lines, shards,
document indexes and sources.

Example:
  kforge prepare-data --input austen.txt --output data/austen --train-tokenizer --vocab-size 8000
  kforge prepare-data --input web.jsonl.zst --text-field content --skip-bad-lines \
      --tokenizer data/austen/tokenizer.model --output data/web --threads 8
  # then, in the training config:
  #   [model] vocab_size = 8000
  #   [data]  dataset_path = "data/austen/train"   tokenizer_path = "data/austen/tokenizer.model"
  #   [eval]  dataset_path = "data/austen/eval"

With --image-text the one --input is a JSON Lines manifest, one {"image": "relative/path.jpg", "text": "...",
"prompt": "..."} per line (image paths relative to the manifest; .jpg .jpeg .png or .webp), written as
WebDataset shards OUTPUT/shard-NNNNNN.tar of --samples-per-shard samples: members NNNNNNNNN.jpg (the image's
bytes), .txt (the text) and .json (the line's object), with OUTPUT/webdataset.json listing them:
  kforge prepare-data --image-text --input photos/manifest.jsonl --output data/photos --samples-per-shard 1000
)";

// Runs the preparation: a ConfigError is a usage error (exit 2), any other error a failure (exit 1).
int run_preparation(const std::function<int()>& prepare) {
  try {
    return prepare();
  } catch (const sdk::ConfigError& e) {
    std::cerr << "kforge prepare-data: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "kforge prepare-data: " << e.what() << "\n";
    return kExitFailure;
  }
}

// --image-text: the manifest to WebDataset shards; the tokenizer options do not apply.
int prepare_image_text(const cxxopts::ParseResult& args, const std::vector<std::string>& inputs) {
  data::WebDatasetWriteOptions o;
  try {
    for (const char* key : {"train-tokenizer", "vocab-size", "tokenizer", "text-field", "documents", "shard-tokens"}) {
      if (args.count(key)) throw sdk::ConfigError(fmt::format("--{} does not apply with --image-text", key));
    }
    if (inputs.size() != 1) {
      throw sdk::ConfigError(fmt::format("--image-text takes one --input manifest, not {}", inputs.size()));
    }
    if (!args.count("output")) throw sdk::ConfigError("no output directory: give --output DIR");
    o.manifest = inputs.front();
    o.output = args["output"].as<std::string>();
    o.samples_per_shard = args["samples-per-shard"].as<int64_t>();
    o.skip_bad_lines = args.count("skip-bad-lines") > 0;
    o.overwrite = args.count("overwrite") > 0;
  } catch (const std::exception& e) {
    std::cerr << "kforge prepare-data: " << e.what() << "\n(see kforge prepare-data --help)\n";
    return kExitUsage;
  }
  return run_preparation([&] {
    const data::WebDatasetWriteResult r = data::write_webdataset(o);
    for (const std::string& skipped : r.skipped) std::cerr << "kforge prepare-data: skipped " << skipped << "\n";
    std::cout << fmt::format(
        "samples     {} ({:.1f} MB of images) in {} shard(s), {} line(s) skipped\n"
        "metadata    {}\n",
        r.samples, r.image_bytes / 1e6, r.shards.size(), r.skipped.size(), r.metadata.string());
    return kExitOk;
  });
}

}  // namespace

cxxopts::Options prepare_data_options() {
  cxxopts::Options options(
      "kforge prepare-data",
      "Tokenise text or JSON Lines files (optionally compressed) with a tokenizer (a SentencePiece "
      "model trained here, or given) into .npy token shards for the memmap dataset.");
  options.custom_help(
      "--input FILE... --output DIR (--train-tokenizer --vocab-size N | --tokenizer FILE) | --image-text --input "
      "MANIFEST.jsonl --output DIR");
  options.add_options("positional")("files", "", cxxopts::value<std::vector<std::string>>());
  options.add_options()("i,input",
                        "text or JSON Lines file(s) to tokenise, optionally gzip/zstd/xz compressed (repeatable; "
                        "files after the options count too)",
                        cxxopts::value<std::vector<std::string>>())("o,output", "output directory",
                                                                    cxxopts::value<std::string>())(
      "train-tokenizer", "train a SentencePiece tokenizer on the input (OUTPUT/tokenizer.model)")(
      "vocab-size", "vocabulary size of the trained tokenizer", cxxopts::value<int>())(
      "model-type", "tokenizer model: bpe or unigram", cxxopts::value<std::string>()->default_value("bpe"))(
      "tokenizer",
      "use this tokenizer instead of training one: a SentencePiece .model, a Hugging Face tokenizer.json or a "
      ".tiktoken file",
      cxxopts::value<std::string>())("eval-fraction", "fraction of documents (the last ones) written to OUTPUT/eval",
                                     cxxopts::value<double>()->default_value("0.05"))(
      "shard-tokens", "tokens per shard file", cxxopts::value<int64_t>()->default_value("50000000"))(
      "documents", "plain-text document boundaries: paragraphs (blank lines) or lines",
      cxxopts::value<std::string>()->default_value("paragraphs"))(
      "format", "input format: auto (JSON Lines for *.jsonl and *.ndjson, else text), text or jsonl",
      cxxopts::value<std::string>()->default_value("auto"))("text-field",
                                                            "JSON Lines: the member that holds each document's text",
                                                            cxxopts::value<std::string>()->default_value("text"))(
      "skip-bad-lines",
      "JSON Lines: skip lines that are not JSON or lack a string --text-field (counted, reported and recorded in "
      "metadata.json) instead of failing")("threads", "encoding threads (0: every core)",
                                           cxxopts::value<int>()->default_value("0"))(
      "overwrite", "replace .npy shards already in OUTPUT/train and OUTPUT/eval (--image-text: .tar shards)")(
      "image-text", "the input is an image-text JSON Lines manifest: write WebDataset .tar shards")(
      "samples-per-shard", "--image-text: samples per .tar shard", cxxopts::value<int64_t>()->default_value("1000"))(
      "q,quiet", "no progress on stderr")("h,help", "this help");
  options.parse_positional({"files"});
  options.positional_help("");
  return options;
}

int cmd_prepare_data(int argc, char** argv) {
  cxxopts::Options options = prepare_data_options();
  const ParsedOptions parsed = parse_options(options, argc, argv, options.help({""}) + kExample);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;

  if (args.count("image-text")) {
    std::vector<std::string> inputs;
    for (const char* key : {"input", "files"}) {
      if (args.count(key)) {
        for (const auto& p : args[key].as<std::vector<std::string>>()) inputs.push_back(p);
      }
    }
    return prepare_image_text(args, inputs);
  }
  data::PrepareOptions o;
  try {
    if (!args.count("input") && !args.count("files")) {
      throw sdk::ConfigError("no input: give one or more --input FILE");
    }
    if (!args.count("output")) throw sdk::ConfigError("no output directory: give --output DIR");
    for (const char* key : {"input", "files"}) {
      if (!args.count(key)) continue;
      for (const auto& p : args[key].as<std::vector<std::string>>()) o.inputs.emplace_back(p);
    }
    o.output = args["output"].as<std::string>();
    o.train_tokenizer = args.count("train-tokenizer") > 0;
    if (args.count("vocab-size")) o.vocab_size = args["vocab-size"].as<int>();
    if (args.count("vocab-size") && !o.train_tokenizer) {
      throw sdk::ConfigError("--vocab-size only applies with --train-tokenizer (a given --tokenizer fixes its own)");
    }
    if (args.count("tokenizer")) o.tokenizer = args["tokenizer"].as<std::string>();
    o.model_type = args["model-type"].as<std::string>();
    if (o.model_type != "bpe" && o.model_type != "unigram") {
      throw sdk::ConfigError(fmt::format("--model-type '{}' is not supported; use bpe or unigram", o.model_type));
    }
    o.eval_fraction = args["eval-fraction"].as<double>();
    o.shard_tokens = args["shard-tokens"].as<int64_t>();
    const std::string split = args["documents"].as<std::string>();
    if (split != "paragraphs" && split != "lines") {
      throw sdk::ConfigError(fmt::format("--documents '{}' is not supported; use paragraphs or lines", split));
    }
    o.split = split == "lines" ? data::DocumentSplit::lines : data::DocumentSplit::paragraphs;
    const std::string format = args["format"].as<std::string>();
    if (format != "auto" && format != "text" && format != "jsonl") {
      throw sdk::ConfigError(fmt::format("--format '{}' is not supported; use auto, text or jsonl", format));
    }
    if (format != "auto") o.format = format == "jsonl" ? data::InputFormat::jsonl : data::InputFormat::text;
    o.text_field = args["text-field"].as<std::string>();
    o.skip_bad_lines = args.count("skip-bad-lines") > 0;
    o.threads = args["threads"].as<int>();
    if (o.threads < 0) throw sdk::ConfigError(fmt::format("--threads {} must be >= 0 (0: every core)", o.threads));
    o.overwrite = args.count("overwrite") > 0;
    o.progress = args.count("quiet") == 0;
  } catch (const std::exception& e) {
    std::cerr << "kforge prepare-data: " << e.what() << "\n(see kforge prepare-data --help)\n";
    return kExitUsage;
  }

  return run_preparation([&] {
    const data::PrepareResult r = data::prepare_data(o);
    std::cout << fmt::format(
        "tokenizer   {} ({}, {} pieces, eos {})\n"
        "train       {} documents, {} tokens in {} shard(s) ({})\n"
        "eval        {} documents, {} tokens in {} shard(s)\n"
        "skipped     {} bad line(s), {} empty document(s)\n"
        "throughput  {:.1f} MB of text in {:.2f} s: {:.2f} MB/s, {:.0f} tokens/s, {:.2f} MB per CPU second "
        "({} threads)\n"
        "metadata    {}\n\n"
        "config:\n"
        "  [model] vocab_size = {}\n"
        "  [data]  dataset_path = \"{}\"  tokenizer_path = \"{}\"\n",
        r.tokenizer.string(), r.tokenizer_kind, r.vocab_size, r.eos_id, r.train_documents, r.train_tokens,
        r.train_shards.size(), data::dtype_name(r.dtype), r.eval_documents, r.eval_tokens, r.eval_shards.size(),
        r.skipped_lines, r.empty_documents, r.text_bytes / 1e6, r.encode_seconds,
        r.text_bytes / 1e6 / std::max(r.encode_seconds, 1e-9),
        static_cast<double>(r.train_tokens + r.eval_tokens) / std::max(r.encode_seconds, 1e-9),
        r.text_bytes / 1e6 / std::max(r.encode_cpu_seconds, 1e-9), r.threads, r.metadata.string(), r.vocab_size,
        (o.output / "train").string(), r.tokenizer.string());
    if (!r.eval_shards.empty()) {
      std::cout << fmt::format("  [eval]  dataset_path = \"{}\"\n", (o.output / "eval").string());
    }
    return kExitOk;
  });
}

}  // namespace kforge::cli
