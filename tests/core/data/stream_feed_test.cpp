// StreamFeed ([data] hf_streaming): a feed stopped anywhere (in the first file, the second, the buffer's draining,
// the next epoch) and resumed from its saved position gives the uninterrupted token stream bit for bit, with worker
// threads or without (which give the same stream); on another rank count it continues the shared document order;
// batches are its windows; a bad line is named.
#include "feed/stream_feed.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/test_host.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// `n` documents of 1..4 random lowercase words as JSON Lines.
fs::path write_words(const fs::path& file, int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::ofstream out(file);
  for (int d = 0; d < n; ++d) {
    std::string text;
    for (int w = 0, words = 1 + static_cast<int>(rng() % 4); w < words; ++w) {
      for (int c = 0, len = 2 + static_cast<int>(rng() % 5); c < len; ++c) text += static_cast<char>('a' + rng() % 26);
      text += ' ';
    }
    out << nlohmann::json{{"text", text}}.dump() << "\n";
  }
  return file;
}

class StreamFeedTest : public ::testing::Test {
 protected:
  fs::path dir = temp_dir("stream_feed");
  fs::path tokenizer = tiny_tokenizer(dir);
  std::vector<fs::path> files = {write_words(dir / "train-0.jsonl", 50, 1), write_words(dir / "train-1.jsonl", 70, 2)};

  feed::StreamFeed::Shape shape(int workers) const {
    feed::StreamFeed::Shape s;
    s.batch_size = 2;
    s.seq_len = 16;
    s.vocab_size = 64;
    s.seed = 11;
    s.shuffle_buffer = 60;
    s.workers = workers;
    s.prefetch_factor = 2;
    return s;
  }
  std::vector<std::vector<int>> windows(feed::StreamFeed& f, int n) const {
    std::vector<std::vector<int>> out;
    for (int k = 0; k < n; ++k) out.push_back(f.next_window());
    return out;
  }
};

// A checkpoint's train_state for one rank's saved entry, through its JSON text.
nlohmann::json train_state_of(const feed::StreamFeed& f) {
  nlohmann::json entry = {{"rank", 0}}, ts;
  f.save_position(entry, ts, 0);
  ts["data"] = nlohmann::json::array({entry});
  ts["data_parallel_size"] = 1;
  return nlohmann::json::parse(ts.dump());
}

TEST_F(StreamFeedTest, AResumedFeedGivesTheUninterruptedTokenStreamBitForBitWithOrWithoutWorkers) {
  constexpr int kWindows = 400;  // a few epochs of the 120 documents
  feed::StreamFeed straight(files, tokenizer, shape(0), 0, 1);
  const auto reference = windows(straight, kWindows);
  feed::StreamFeed threaded(files, tokenizer, shape(3), 0, 1);
  EXPECT_EQ(windows(threaded, kWindows), reference) << "worker threads changed the stream";
  std::set<int64_t> files_at_stops, epochs_at_stops;
  for (const int workers : {0, 3}) {
    for (const int stop : {0, 1, 2, 7, 23, 61, 97, 150, 233, 310}) {
      feed::StreamFeed first(files, tokenizer, shape(workers), 0, 1);
      auto got = windows(first, stop);
      const nlohmann::json ts = train_state_of(first);
      files_at_stops.insert(ts["data"][0]["stream"]["position"]["file"].get<int64_t>());
      epochs_at_stops.insert(ts["data"][0]["stream"]["position"]["epoch"].get<int64_t>());
      EXPECT_LT(ts["data"][0]["stream"]["carry"].size(), 17u) << "the carry is less than a window";
      feed::StreamFeed resumed(files, tokenizer, shape(workers), 0, 1);
      resumed.resume(ts, 0);
      const auto rest = windows(resumed, kWindows - stop);
      got.insert(got.end(), rest.begin(), rest.end());
      EXPECT_EQ(got, reference) << "stopped after " << stop << " windows, " << workers << " workers";
    }
  }
  // Positions are saved per chunk of 64 documents: at document 0 (file 0), 64 (the buffer of 60 draining after both
  // files: file 2), 128 (epoch 1, its reader in file 1), ...
  EXPECT_EQ(files_at_stops, (std::set<int64_t>{0, 1, 2}));
  EXPECT_TRUE(epochs_at_stops.count(0) && epochs_at_stops.count(1)) << "no stop in the first or the next epoch";
}

// Two ranks' checkpoint resumed on one: the feed continues the shared document order from the earlier of the two
// positions, without the carried tokens: the windows are that order's documents, tokenised here with EOS after each.
TEST_F(StreamFeedTest, AnotherRankCountContinuesTheSharedOrderFromTheEarliestPosition) {
  feed::StreamFeed r0(files, tokenizer, shape(2), 0, 2), r1(files, tokenizer, shape(0), 1, 2);
  windows(r0, 90);
  windows(r1, 70);
  nlohmann::json ts;
  for (const feed::StreamFeed* f : {&r0, &r1}) {
    nlohmann::json entry = {{"rank", f == &r0 ? 0 : 1}};
    f->save_position(entry, ts, 0);
    ts["data"].push_back(entry);
  }
  ts["data_parallel_size"] = 2;
  const auto document = [&](int r) { return ts["data"][r]["stream"]["position"]["document"].get<int64_t>(); };
  ASSERT_NE(document(0), document(1)) << "pick stop points whose positions differ";
  const nlohmann::json& earliest = ts["data"][document(0) < document(1) ? 0 : 1]["stream"]["position"];
  feed::StreamFeed one(files, tokenizer, shape(0), 0, 1);
  one.resume(ts, 0);
  const auto got = windows(one, 60);

  feed::DocumentStream order(files, 60, 11, 0, 1);
  order.restore(feed::StreamPosition::from_json(earliest));
  const data::Tokenizer tok(tokenizer);
  std::vector<int> tokens;
  while (tokens.size() < 60 * 17) {
    const std::string text = nlohmann::json::parse(order.next().text).at("text").get<std::string>();
    const std::vector<int> ids = tok.encode(text);
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    tokens.push_back(tok.eos_id());
  }
  for (size_t w = 0; w < got.size(); ++w) {
    EXPECT_EQ(got[w], std::vector<int>(tokens.begin() + static_cast<std::ptrdiff_t>(17 * w),
                                       tokens.begin() + static_cast<std::ptrdiff_t>(17 * (w + 1))))
        << "window " << w;
  }
}

TEST_F(StreamFeedTest, BatchesAreTheWindowsAsInputsAndNextTokenLabels) {
  feed::StreamFeed a(files, tokenizer, shape(0), 0, 1), b(files, tokenizer, shape(0), 0, 1);
  const auto rows = windows(a, 4);
  const std::vector<data::Batch> batches = [&] {
    std::vector<data::Batch> out;
    for (int step = 0; step < 2; ++step) out.push_back(b.micro_batches(step, false).at(0));
    return out;
  }();
  for (size_t i = 0; i < rows.size(); ++i) {
    const data::Batch& batch = batches[i / 2];
    const int64_t r = static_cast<int64_t>(i % 2);
    for (int64_t t = 0; t < 16; ++t) {
      EXPECT_EQ(batch.input_ids[r][t].item<int64_t>(), rows[i][static_cast<size_t>(t)]);
      EXPECT_EQ(batch.labels[r][t].item<int64_t>(), rows[i][static_cast<size_t>(t + 1)]);
    }
  }
}

TEST_F(StreamFeedTest, ALineThatIsNotADocumentIsNamedByFileAndLine) {
  std::ofstream(files[1], std::ios::app) << "{not json\n";
  for (const int workers : {0, 2}) {
    feed::StreamFeed f(files, tokenizer, shape(workers), 0, 1);
    try {
      windows(f, 400);
      ADD_FAILURE() << "a bad line was streamed";
    } catch (const sdk::Error& e) {
      expect_has(e.what(), {"train-1.jsonl' line 71: not valid JSON", "fix or remove the line in the export"});
    }
  }
}

}  // namespace
}  // namespace kforge::test
