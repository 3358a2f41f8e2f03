// kforge prepare-data: tokenise text files into train/eval .npy shards for the memmap dataset.
#include <cxxopts.hpp>
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/parse_options.h"
#include "data/prepare.h"
#include "kforge/sdk/error.h"

namespace kforge::cli {
namespace {

constexpr const char* kExample = R"(
Documents are separated by blank lines (--documents lines: one per line); each is followed by the
tokenizer's EOS id. The last --eval-fraction of the documents goes to OUTPUT/eval, the rest to
OUTPUT/train, as tokens_000.npy, tokens_001.npy, ... (uint16 for vocabularies up to 65536, else uint32).
OUTPUT/metadata.json records the tokenizer, vocabulary, dtype, token counts, shards and sources.

Example:
  kforge prepare-data --input austen.txt --output data/austen --train-tokenizer --vocab-size 8000
  # then, in the training config:
  #   [model] vocab_size = 8000
  #   [data]  dataset_path = "data/austen/train"   tokenizer_path = "data/austen/tokenizer.model"
  #   [eval]  dataset_path = "data/austen/eval"
)";

}  // namespace

int cmd_prepare_data(int argc, char** argv) {
  cxxopts::Options options("kforge prepare-data",
                           "Tokenise text files with a SentencePiece tokenizer (trained here or given) into .npy "
                           "token shards for the memmap dataset.");
  options.custom_help("--input FILE... --output DIR (--train-tokenizer --vocab-size N | --tokenizer MODEL.model)");
  options.add_options("positional")("files", "", cxxopts::value<std::vector<std::string>>());
  options.add_options()("i,input", "text file(s) to tokenise (repeatable; files after the options count too)",
                        cxxopts::value<std::vector<std::string>>())(
      "o,output", "output directory", cxxopts::value<std::string>())(
      "train-tokenizer", "train a SentencePiece tokenizer on the input (OUTPUT/tokenizer.model)")(
      "vocab-size", "vocabulary size of the trained tokenizer", cxxopts::value<int>())(
      "model-type", "tokenizer model: bpe or unigram", cxxopts::value<std::string>()->default_value("bpe"))(
      "tokenizer", "use this SentencePiece .model instead of training one", cxxopts::value<std::string>())(
      "eval-fraction", "fraction of documents (the last ones) written to OUTPUT/eval",
      cxxopts::value<double>()->default_value("0.05"))(
      "shard-tokens", "tokens per shard file", cxxopts::value<int64_t>()->default_value("50000000"))(
      "documents", "document boundaries: paragraphs (blank lines) or lines",
      cxxopts::value<std::string>()->default_value("paragraphs"))(
      "overwrite", "replace .npy shards already in OUTPUT/train and OUTPUT/eval")(
      "q,quiet", "no progress on stderr")("h,help", "this help");
  options.parse_positional({"files"});
  options.positional_help("");

  const ParsedOptions parsed = parse_options(options, argc, argv, options.help({""}) + kExample);
  if (!parsed.args) return parsed.exit_code;
  const cxxopts::ParseResult& args = *parsed.args;

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
    o.overwrite = args.count("overwrite") > 0;
    o.progress = args.count("quiet") == 0;
  } catch (const std::exception& e) {
    std::cerr << "kforge prepare-data: " << e.what() << "\n(see kforge prepare-data --help)\n";
    return kExitUsage;
  }

  try {
    const data::PrepareResult r = data::prepare_data(o);
    std::cout << fmt::format(
        "tokenizer   {} ({} pieces, eos {})\n"
        "train       {} documents, {} tokens in {} shard(s) ({})\n"
        "eval        {} documents, {} tokens in {} shard(s)\n"
        "metadata    {}\n\n"
        "config:\n"
        "  [model] vocab_size = {}\n"
        "  [data]  dataset_path = \"{}\"  tokenizer_path = \"{}\"\n",
        r.tokenizer.string(), r.vocab_size, r.eos_id, r.train_documents, r.train_tokens, r.train_shards.size(),
        data::dtype_name(r.dtype), r.eval_documents, r.eval_tokens, r.eval_shards.size(), r.metadata.string(),
        r.vocab_size, (o.output / "train").string(), r.tokenizer.string());
    if (!r.eval_shards.empty()) {
      std::cout << fmt::format("  [eval]  dataset_path = \"{}\"\n", (o.output / "eval").string());
    }
    return kExitOk;
  } catch (const sdk::ConfigError& e) {
    std::cerr << "kforge prepare-data: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "kforge prepare-data: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace kforge::cli
