// prepare_data: two passes over the text (count documents, then encode into train/eval shards).
#include "data/prepare.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>

#include "data/progress.h"
#include "data/tokenizer.h"
#include "kforge/sdk/error.h"
#include "kforge/sdk/version.h"

namespace kforge::data {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kProgressMinBytes = 4u << 20;

bool blank(const std::string& line) {
  return line.find_first_not_of(" \t\r\f\v") == std::string::npos;
}

// Calls on_line for each non-blank line and on_doc_end after each document; on_bytes with the bytes read.
void for_each_document(const std::vector<fs::path>& inputs, DocumentSplit split,
                       const std::function<void(const std::string&)>& on_line, const std::function<void()>& on_doc_end,
                       const std::function<void(uint64_t)>& on_bytes) {
  uint64_t bytes = 0;
  std::string line;
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw sdk::Error(fmt::format("cannot read input '{}'", path.string()));
    bool open_doc = false;
    while (std::getline(in, line)) {
      bytes += line.size() + 1;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (blank(line)) {
        if (open_doc) on_doc_end();
        open_doc = false;
      } else {
        on_line(line);
        open_doc = true;
        if (split == DocumentSplit::lines) {
          on_doc_end();
          open_doc = false;
        }
      }
      if (on_bytes) on_bytes(bytes);
    }
    if (in.bad()) throw sdk::Error(fmt::format("error reading input '{}'", path.string()));
    if (open_doc) on_doc_end();  // a document never spans files
  }
}

// Writes DIR/tokens_NNN.npy files of at most shard_tokens tokens each.
class ShardSet {
 public:
  ShardSet(fs::path dir, TokenDtype dtype, int64_t shard_tokens, int width)
      : dir_(std::move(dir)), dtype_(dtype), shard_tokens_(shard_tokens), width_(width) {}

  void append(const std::vector<int>& ids) {
    size_t at = 0;
    while (at < ids.size()) {
      if (!writer_ || writer_->size() >= shard_tokens_) roll();
      const size_t room = static_cast<size_t>(shard_tokens_ - writer_->size());
      const size_t n = std::min(room, ids.size() - at);
      writer_->append(ids.data() + at, n);
      at += n;
      tokens_ += static_cast<int64_t>(n);
    }
  }
  void close() {
    if (writer_) writer_->close();
    writer_.reset();
  }
  int64_t tokens() const { return tokens_; }
  const std::vector<fs::path>& files() const { return files_; }

 private:
  void roll() {
    close();
    files_.push_back(dir_ / fmt::format("tokens_{:0{}}.npy", files_.size(), width_));
    writer_ = std::make_unique<NpyTokenWriter>(files_.back(), dtype_);
  }
  fs::path dir_;
  TokenDtype dtype_;
  int64_t shard_tokens_;
  int width_;
  std::unique_ptr<NpyTokenWriter> writer_;
  std::vector<fs::path> files_;
  int64_t tokens_ = 0;
};

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

int digits_for(uint64_t n) {
  int d = 1;
  while (n >= 10) {
    n /= 10;
    ++d;
  }
  return d;
}

}  // namespace

PrepareResult prepare_data(const PrepareOptions& o) {
  // ---- validate -------------------------------------------------------------------------------
  if (o.inputs.empty()) throw sdk::ConfigError("no input text: give one or more --input FILE");
  uint64_t total_bytes = 0;
  nlohmann::json sources = nlohmann::json::array();
  for (const auto& p : o.inputs) {
    std::error_code ec;
    if (!fs::exists(p, ec)) throw sdk::Error(fmt::format("input '{}' does not exist", p.string()));
    if (!fs::is_regular_file(p, ec)) throw sdk::Error(fmt::format("input '{}' is not a regular file", p.string()));
    const uint64_t size = fs::file_size(p);
    total_bytes += size;
    sources.push_back({{"path", fs::absolute(p).lexically_normal().string()}, {"bytes", size}});
  }
  if (o.train_tokenizer == !o.tokenizer.empty()) {
    throw sdk::ConfigError("give exactly one of --train-tokenizer (with --vocab-size N) or --tokenizer MODEL.model");
  }
  if (o.train_tokenizer && o.vocab_size <= 0) {
    throw sdk::ConfigError("--train-tokenizer needs --vocab-size N (e.g. 8000, or 32000 for a large corpus)");
  }
  if (!(o.eval_fraction >= 0.0 && o.eval_fraction < 1.0)) {
    throw sdk::ConfigError(fmt::format("--eval-fraction {} must be in [0, 1)", o.eval_fraction));
  }
  if (o.shard_tokens < 1) throw sdk::ConfigError(fmt::format("--shard-tokens {} must be >= 1", o.shard_tokens));
  check_writable(o.output);
  const fs::path train_dir = o.output / "train", eval_dir = o.output / "eval";
  prepare_split_dir(train_dir, o.overwrite);
  prepare_split_dir(eval_dir, o.overwrite);

  // ---- tokenizer ------------------------------------------------------------------------------
  fs::path model = o.tokenizer;
  if (o.train_tokenizer) {
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
  r.vocab_size = tok.vocab_size();
  r.eos_id = tok.eos_id();
  r.dtype = dtype_for_vocab(r.vocab_size);

  // ---- pass 1: count documents --------------------------------------------------------------------
  int64_t documents = 0;
  for_each_document(o.inputs, o.split, [](const std::string&) {}, [&] { ++documents; }, nullptr);
  if (documents == 0) {
    throw sdk::Error("the input files hold no text (every line is blank)");
  }
  int64_t n_eval = 0;
  if (o.eval_fraction > 0.0 && documents >= 2) {
    n_eval = std::clamp<int64_t>(std::llround(o.eval_fraction * static_cast<double>(documents)), 1, documents - 1);
  } else if (o.eval_fraction > 0.0) {
    fmt::print(stderr, "warning: only one document in the input; eval/ stays empty (split text with blank lines)\n");
  }
  const int64_t n_train = documents - n_eval;

  // ---- pass 2: encode -------------------------------------------------------------------------
  // Name width from an upper bound on the shard count (a token covers >= 1 byte, plus one EOS per document),
  // so shard names sort in order.
  const int width =
      std::max(3, digits_for((total_bytes + static_cast<uint64_t>(documents)) / static_cast<uint64_t>(o.shard_tokens)));
  ShardSet train(train_dir, r.dtype, o.shard_tokens, width), eval(eval_dir, r.dtype, o.shard_tokens, width);
  Progress progress("encoding", total_bytes, o.progress && total_bytes >= kProgressMinBytes);
  int64_t doc = 0;
  const std::vector<int> eos{tok.eos_id()};
  for_each_document(
      o.inputs, o.split, [&](const std::string& line) { (doc < n_train ? train : eval).append(tok.encode(line)); },
      [&] {
        (doc < n_train ? train : eval).append(eos);
        ++doc;
      },
      [&](uint64_t bytes) { progress.update(bytes); });
  progress.finish();
  train.close();
  eval.close();
  r.train_documents = n_train;
  r.eval_documents = n_eval;
  r.train_tokens = train.tokens();
  r.eval_tokens = eval.tokens();
  r.train_shards = train.files();
  r.eval_shards = eval.files();

  // ---- metadata -------------------------------------------------------------------------------
  auto relative = [&](const std::vector<fs::path>& files) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& f : files) a.push_back(fs::relative(f, o.output).string());
    return a;
  };
  const nlohmann::json meta{
      {"format", "kforge-tokens-v1"},
      {"kforge_version", KFORGE_SDK_VERSION},
      {"tokenizer", r.tokenizer.string()},
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
      {"shard_tokens", o.shard_tokens},
      {"eval_fraction", o.eval_fraction},
      {"document_split", o.split == DocumentSplit::paragraphs ? "paragraphs" : "lines"},
      {"sources", sources},
  };
  r.metadata = o.output / "metadata.json";
  std::ofstream out(r.metadata);
  out << meta.dump(2) << "\n";
  if (!out) throw sdk::Error(fmt::format("cannot write '{}'", r.metadata.string()));
  return r;
}

}  // namespace kforge::data
