// Packed windows ([data] pack_sequences): document ids and the ignored cross-document labels on hand-made
// windows (EOS first, last, twice in a row, absent), through make_batch as the trainer calls it.
#include "data/documents.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "data/batch.h"
#include "kforge/sdk/dataset.h"

namespace kforge::test {
namespace {

constexpr int64_t kEos = 2;
constexpr int64_t kX = data::kIgnoredLabel;

// Windows given as lists of tokens.
class ListedWindows final : public sdk::Dataset {
 public:
  explicit ListedWindows(std::vector<std::vector<int64_t>> windows) : windows_(std::move(windows)) {}
  int64_t size() const override { return static_cast<int64_t>(windows_.size()); }
  at::Tensor window(int64_t index) const override { return at::tensor(windows_.at(index), at::kLong); }
  std::string describe() const override { return "listed windows"; }

 private:
  std::vector<std::vector<int64_t>> windows_;
};

at::Tensor row(std::vector<int64_t> values) { return at::tensor(values, at::kLong); }

struct Expected {
  std::vector<int64_t> window, doc_ids, labels;
};

void expect_packed(const Expected& e) {
  const ListedWindows data({e.window});
  const data::Batch batch = data::make_batch(data, {0}, /*vocab_size=*/0, kEos);
  EXPECT_TRUE(batch.doc_ids[0].equal(row(e.doc_ids))) << batch.doc_ids;
  EXPECT_TRUE(batch.labels[0].equal(row(e.labels))) << batch.labels;
  EXPECT_TRUE(batch.input_ids[0].equal(row(std::vector<int64_t>(e.window.begin(), e.window.end() - 1))));
}

TEST(Documents, EosInTheMiddleStartsTheNextDocumentAfterIt) {
  // window 5 6 EOS 7 8 9: inputs 5 6 EOS 7 8, labels 6 EOS 7 8 9; EOS -> 7 crosses the boundary.
  expect_packed({{5, 6, kEos, 7, 8, 9}, {0, 0, 0, 1, 1}, {6, kEos, kX, 8, 9}});
}

TEST(Documents, EosFirstIsADocumentOfItsOwn) { expect_packed({{kEos, 5, 6, 7}, {0, 1, 1}, {kX, 6, 7}}); }

TEST(Documents, EosLastIsALabelOfTheLastDocument) {
  // The final EOS is only a label: predicting it stays within the document.
  expect_packed({{5, 6, 7, kEos}, {0, 0, 0}, {6, 7, kEos}});
  // An EOS as the last input: its label (the next document's first token) is ignored.
  expect_packed({{5, 6, kEos, 8}, {0, 0, 0}, {6, kEos, kX}});
}

TEST(Documents, ConsecutiveEosAreDocumentsOfOneToken) {
  expect_packed({{5, kEos, kEos, kEos, 6, 7}, {0, 0, 1, 2, 3}, {kEos, kX, kX, kX, 7}});
}

TEST(Documents, NoEosIsOneDocument) { expect_packed({{5, 6, 7, 8}, {0, 0, 0}, {6, 7, 8}}); }

TEST(Documents, EachRowCountsFromZero) {
  const ListedWindows data({{5, kEos, 6, kEos, 7}, {8, 9, kEos, 3, 4}});
  const data::Batch batch = data::make_batch(data, {0, 1}, 0, kEos);
  EXPECT_TRUE(batch.doc_ids.equal(row({0, 0, 1, 1, 0, 0, 0, 1}).view({2, 4}))) << batch.doc_ids;
  EXPECT_TRUE(batch.labels.equal(row({kEos, kX, kEos, kX, 9, kEos, kX, 4}).view({2, 4}))) << batch.labels;
}

TEST(Documents, WithoutAnEosIdBatchesAreNotPacked) {
  const ListedWindows data({{5, kEos, 6}});
  const data::Batch batch = data::make_batch(data, {0});
  EXPECT_FALSE(batch.doc_ids.defined());
  EXPECT_TRUE(batch.labels[0].equal(row({kEos, 6})));
}

}  // namespace
}  // namespace kforge::test
