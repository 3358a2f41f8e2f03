// DocumentStream ([data] hf_streaming): every document once per epoch, never one not yet read (the buffer's bound),
// the ranks' shares of one shared order, gzip read like plain text, and a restored position that continues exactly,
// also dealt over another number of ranks.
#include "feed/document_stream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

// Documents first..first+n-1 as JSON Lines ({"text": "doc <id> ..."} of varying length), a blank line after every
// seventh; gzip-compressed when `gzip`.
fs::path write_documents(const fs::path& file, int first, int n, bool gzip = false) {
  const fs::path plain = gzip ? fs::path(file.string() + ".plain") : file;
  {
    std::ofstream out(plain);
    for (int id = first; id < first + n; ++id) {
      out << nlohmann::json{{"text", "doc " + std::to_string(id) + std::string(static_cast<size_t>(id % 13), 'x')}}.dump()
          << "\n";
      if (id % 7 == 0) out << "\n";
    }
  }
  if (gzip) EXPECT_EQ(run_command("gzip -c '" + plain.string() + "' > '" + file.string() + "'"), 0);
  return file;
}

int id_of(const feed::StreamedDocument& d) {
  const std::string text = nlohmann::json::parse(d.text).at("text").get<std::string>();
  return std::stoi(text.substr(4));
}

std::vector<int> draw(feed::DocumentStream& s, int n) {
  std::vector<int> ids;
  for (int k = 0; k < n; ++k) ids.push_back(id_of(s.next()));
  return ids;
}

// 40 plain documents (ids 0..39) and 60 gzip ones (40..99).
class DocumentStreamTest : public ::testing::Test {
 protected:
  fs::path dir = temp_dir("document_stream");
  std::vector<fs::path> files = {write_documents(dir / "a.jsonl", 0, 40),
                                 write_documents(dir / "b.jsonl.gz", 40, 60, /*gzip=*/true)};
  static constexpr int kDocs = 100;
};

TEST_F(DocumentStreamTest, EachEpochGivesEveryDocumentOnceAndNeverOneTheBufferHasNotRead) {
  feed::DocumentStream s(files, 16, 7, 0, 1);
  const std::vector<int> first = draw(s, kDocs), second = draw(s, kDocs);
  for (const auto* epoch : {&first, &second}) {
    std::vector<int> sorted = *epoch;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> all(kDocs);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all);
    // The k-th document drawn was among the first k + 16 read, which are ids 0..k+15 in file order.
    for (int k = 0; k < kDocs; ++k) EXPECT_LT((*epoch)[static_cast<size_t>(k)], k + 16) << "draw " << k;
  }
  EXPECT_NE(first, second) << "the epochs were drawn alike";
  std::vector<int> in_order(kDocs);
  std::iota(in_order.begin(), in_order.end(), 0);
  EXPECT_NE(first, in_order) << "nothing was shuffled";
  EXPECT_NE(draw(*std::make_unique<feed::DocumentStream>(files, 16, 8, 0, 1), kDocs), first) << "the seed is unused";
}

TEST_F(DocumentStreamTest, ABufferOfOneKeepsTheFilesOrder) {
  feed::DocumentStream s(files, 1, 7, 0, 1);
  std::vector<int> in_order(kDocs);
  std::iota(in_order.begin(), in_order.end(), 0);
  EXPECT_EQ(draw(s, kDocs), in_order);
}

TEST_F(DocumentStreamTest, EachRankTakesEveryNthDocumentOfTheSharedOrder) {
  feed::DocumentStream one(files, 16, 7, 0, 1);
  const std::vector<int> order = draw(one, 2 * kDocs);
  for (int rank = 0; rank < 3; ++rank) {
    feed::DocumentStream s(files, 16, 7, rank, 3);
    const std::vector<int> mine = draw(s, 60);
    for (size_t j = 0; j < mine.size(); ++j) EXPECT_EQ(mine[j], order[3 * j + static_cast<size_t>(rank)]) << rank;
  }
}

TEST_F(DocumentStreamTest, ARestoredPositionContinuesExactlyInTheBufferTheFilesAndTheNextEpoch) {
  // 0: nothing read; 5, 15: the buffer filling; 39, 41: the plain file's end and the gzip one's start; 99: the buffer
  // draining; 100, 130: the next epoch.
  for (const int ranks : {1, 2}) {
    for (const int k : {0, 5, 15, 39, 41, 99, 100, 130}) {
      feed::DocumentStream s(files, 16, 7, ranks - 1, ranks);
      draw(s, k / ranks);
      const feed::StreamPosition p = feed::StreamPosition::from_json(nlohmann::json::parse(s.position().to_json().dump()));
      const std::vector<int> straight = draw(s, 80);
      feed::DocumentStream resumed(files, 16, 7, ranks - 1, ranks);
      resumed.restore(p);
      EXPECT_EQ(draw(resumed, 80), straight) << "after " << k << " documents on " << ranks << " rank(s)";
    }
  }
}

TEST_F(DocumentStreamTest, AnotherRankCountDealsTheSharedOrderFromTheEarliestPosition) {
  feed::DocumentStream one(files, 16, 7, 0, 1);
  const std::vector<int> order = draw(one, 2 * kDocs);
  feed::DocumentStream r0(files, 16, 7, 0, 2), r1(files, 16, 7, 1, 2);
  draw(r0, 23);
  draw(r1, 17);
  const feed::StreamPosition p0 = r0.position(), p1 = r1.position();
  const feed::StreamPosition& earliest = p0.document < p1.document ? p0 : p1;
  EXPECT_EQ(earliest.document, 2 * 17) << "rank 1 drew global documents 1, 3, ..., 33";
  for (int rank = 0; rank < 3; ++rank) {
    feed::DocumentStream s(files, 16, 7, rank, 3);
    s.restore(earliest);
    const std::vector<int> mine = draw(s, 30);
    size_t g = static_cast<size_t>(earliest.document);
    while (g % 3 != static_cast<size_t>(rank)) ++g;
    for (size_t j = 0; j < mine.size(); ++j) EXPECT_EQ(mine[j], order[g + 3 * j]) << "rank " << rank << " draw " << j;
  }
}

TEST_F(DocumentStreamTest, APositionAnExportNoLongerMatchesIsRefusedNamingTheFile) {
  feed::DocumentStream s(files, 16, 7, 0, 1);
  draw(s, 3);
  feed::StreamPosition p = s.position();
  p.buffer.front() = {0, 3};  // inside a line
  feed::DocumentStream resumed(files, 16, 7, 0, 1);
  try {
    resumed.restore(p);
    ADD_FAILURE() << "a buffer entry inside a line was restored";
  } catch (const sdk::Error& e) {
    expect_has(e.what(), {"a.jsonl' has no line at byte 3", "the export changed since the checkpoint"});
  }
}

}  // namespace
}  // namespace kforge::test
