// The decode pool: the sampler's order whatever the threads' timing (a sample that finishes last is still
// served first), a bounded read-ahead, resume from a position, corrupt samples skipped with a named warning
// and counted, data without a usable sample stopped with a ConfigError and a bounded number of warnings, other
// errors rethrown at their place.
#include "image_text_io/decode_pool.h"

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

#include "data/webdataset_writer.h"
#include "image_fixtures.h"
#include "image_text_io/webdataset_source.h"
#include "kforge/sdk/error.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using image_text::DecodePool;
using image_text::DecodePoolOptions;
using image_text::RawSample;

// PNG samples of varied sizes made in memory. load(held) waits until load(release) has returned, so with two or
// more workers the sample at held finishes after a later one; positions loaded are checked against the
// consumer's progress (`taken`, set by the test) to prove the read-ahead bound.
class GatedSource : public image_text::ImageTextSource {
 public:
  GatedSource(int64_t size, int64_t held, int64_t release) : size_(size), held_(held), release_(release) {}
  int64_t size() const override { return size_; }
  RawSample load(int64_t index) const override {
    if (index == held_) {
      std::unique_lock<std::mutex> lock(mutex_);
      released_cv_.wait(lock, [this] { return released_; });
    }
    max_ahead_ = std::max<int64_t>(max_ahead_, position_of(index) - taken.load());
    if (index == failing) throw sdk::Error("the source broke at sample " + std::to_string(index));
    const int64_t w = 3 + index % 7;
    const int64_t h = 2 + index % 5;
    RawSample raw{"gated", std::to_string(index), encode_png_by_hand(w, h, 3, test_pattern(w, h, index).pixels),
                  "caption " + std::to_string(index), index % 2 ? "prompt" : ""};
    if (index == release_) {
      std::lock_guard<std::mutex> lock(mutex_);
      released_ = true;
      released_cv_.notify_all();
    }
    return raw;
  }
  static int64_t index_at(int64_t position, int64_t size) { return (position * 7 + 3) % size; }
  int64_t position_of(int64_t index) const {
    for (int64_t p = 0; p < size_; ++p) {
      if (index_at(p, size_) == index) return p;
    }
    return -1;
  }
  void release_now() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
  }
  int64_t max_ahead() const { return max_ahead_; }

  std::atomic<int64_t> taken{0};
  int64_t failing = -1;

 private:
  int64_t size_, held_, release_;
  mutable std::mutex mutex_;
  mutable std::condition_variable released_cv_;
  mutable bool released_ = false;
  mutable std::atomic<int64_t> max_ahead_{0};
};

image_text::PreprocessOptions small_preprocess() {
  image_text::PreprocessOptions p;
  p.image_height = 6;
  p.image_width = 5;
  p.text = image_text::TextOptions{12, 0, 1};
  p.tokenize = byte_tokenizer();
  return p;
}

std::vector<image_text::Sample> drain(DecodePool& pool, GatedSource* source) {
  std::vector<image_text::Sample> samples;
  while (auto s = pool.next()) {
    samples.push_back(std::move(*s));
    if (source) source->taken = static_cast<int64_t>(samples.size());
  }
  return samples;
}

TEST(DecodePool, OrderAndValuesDoNotDependOnThreadsOrTiming) {
  constexpr int64_t n = 20;
  const auto order = [](int64_t p) { return GatedSource::index_at(p, n); };
  // Reference: no workers, every sample decoded on this thread in order.
  auto serial_source = std::make_shared<GatedSource>(n, -1, -1);
  DecodePool serial(serial_source, small_preprocess(), order, 0, n, DecodePoolOptions{0, 0, nullptr});
  const std::vector<image_text::Sample> reference = drain(serial, nullptr);
  ASSERT_EQ(reference.size(), static_cast<size_t>(n));
  for (const int workers : {2, 4}) {
    // The first position's sample is held until the fourth position's one has been read.
    auto source = std::make_shared<GatedSource>(n, order(0), order(3));
    DecodePool pool(source, small_preprocess(), order, 0, n, DecodePoolOptions{workers, 4, nullptr});
    const std::vector<image_text::Sample> samples = drain(pool, source.get());
    ASSERT_EQ(samples.size(), reference.size());
    for (size_t p = 0; p < samples.size(); ++p) {
      EXPECT_EQ(samples[p].position, static_cast<int64_t>(p));
      EXPECT_EQ(samples[p].index, order(p));
      EXPECT_TRUE(at::equal(samples[p].pixel_values, reference[p].pixel_values)) << "position " << p;
      EXPECT_TRUE(at::equal(samples[p].input_ids, reference[p].input_ids)) << "position " << p;
      EXPECT_TRUE(at::equal(samples[p].labels, reference[p].labels)) << "position " << p;
    }
    // A worker claims position p only while p < taken + depth (taken here lags the pool's by at most one).
    EXPECT_LE(source->max_ahead(), 4) << workers << " workers";
    EXPECT_EQ(pool.stats().delivered, n);
  }
  // Resuming at position 11 serves exactly the tail of the full order.
  auto source = std::make_shared<GatedSource>(n, -1, -1);
  DecodePool resumed(source, small_preprocess(), order, 11, n, DecodePoolOptions{3, 0, nullptr});
  const std::vector<image_text::Sample> tail = drain(resumed, nullptr);
  ASSERT_EQ(tail.size(), static_cast<size_t>(n - 11));
  for (size_t i = 0; i < tail.size(); ++i) {
    EXPECT_EQ(tail[i].position, static_cast<int64_t>(11 + i));
    EXPECT_TRUE(at::equal(tail[i].pixel_values, reference[11 + i].pixel_values));
  }
}

TEST(DecodePool, ShapesAreStatic) {
  auto source = std::make_shared<GatedSource>(3, -1, -1);
  DecodePool pool(
      source, small_preprocess(), [](int64_t p) { return p; }, 0, 3, DecodePoolOptions{1, 1, nullptr});
  while (auto s = pool.next()) {
    EXPECT_EQ(s->pixel_values.sizes(), (at::IntArrayRef{3, 6, 5}));
    EXPECT_EQ(s->pixel_values.scalar_type(), at::kFloat);
    EXPECT_EQ(s->input_ids.sizes(), (at::IntArrayRef{12}));
    EXPECT_EQ(s->labels.scalar_type(), at::kLong);
  }
}

TEST(DecodePool, CorruptImagesAreSkippedWithAWarningNamingShardAndKey) {
  const auto dir = temp_dir("pool_corrupt");
  const std::string good = encode_jpeg(test_pattern(16, 12, 1), 90);
  data::TarShardWriter shard(dir / "shard-000.tar");
  for (int k = 0; k < 6; ++k) {
    shard.add("k" + std::to_string(k) + ".jpg", k == 2   ? good.substr(0, good.size() / 2)
                                                : k == 4 ? "not an image"
                                                         : good);
    shard.add("k" + std::to_string(k) + ".txt", "caption");
  }
  shard.close();
  std::vector<std::string> warnings;
  const auto source = std::make_shared<image_text::WebDatasetSource>(image_text::find_shards(dir));
  DecodePool pool(
      source, small_preprocess(), [](int64_t p) { return p; }, 0, 6,
      DecodePoolOptions{2, 3, [&warnings](const std::string& w) { warnings.push_back(w); }});
  std::vector<std::string> keys;
  while (auto s = pool.next()) keys.push_back(s->key);
  EXPECT_EQ(keys, (std::vector<std::string>{"k0", "k1", "k3", "k5"}));
  EXPECT_EQ(pool.stats().skipped, 2);
  EXPECT_EQ(pool.stats().delivered, 4);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("shard-000.tar' sample 'k2': corrupt JPEG"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[1].find("shard-000.tar' sample 'k4'"), std::string::npos) << warnings[1];
  EXPECT_NE(warnings[1].find("skipped"), std::string::npos) << warnings[1];
}

// Every image garbage after a JPEG signature (the WebDataset): the pool stops at the
// kMaxConsecutiveFailures-th with a ConfigError naming the dataset, having warned kFailuresShown times, instead of
// skipping (and warning) through every position of the range.
TEST(DecodePool, DataWithoutAUsableSampleStopsWithAConfigErrorAfterAFewWarnings) {
  const auto dir = temp_dir("pool_all_garbage");
  data::TarShardWriter shard(dir / "shard-000.tar");
  for (int k = 0; k < 7; ++k) {
    shard.add("k" + std::to_string(k) + ".jpg", std::string("\xff\xd8\xff\xe0", 4) + std::string(300, 'x'));
    shard.add("k" + std::to_string(k) + ".txt", "caption");
  }
  shard.close();
  const auto source = std::make_shared<image_text::WebDatasetSource>(image_text::find_shards(dir));
  for (const int workers : {0, 3}) {
    std::vector<std::string> warnings;
    DecodePoolOptions options{workers, 4, [&warnings](const std::string& w) { warnings.push_back(w); }, "the shards"};
    // Many passes over the 7 samples, as a training stream's range is.
    DecodePool pool(
        source, small_preprocess(), [](int64_t p) { return p % 7; }, 0, 100 * image_text::kMaxConsecutiveFailures,
        options);
    std::string message;
    try {
      pool.next();
    } catch (const sdk::ConfigError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("the shards: 100 samples in a row could not be used"), std::string::npos) << message;
    EXPECT_NE(message.find("shard-000.tar' sample 'k0': corrupt JPEG"), std::string::npos) << message;
    EXPECT_EQ(pool.stats().skipped, image_text::kMaxConsecutiveFailures) << workers << " workers";
    EXPECT_EQ(warnings.size(), static_cast<size_t>(image_text::kFailuresShown)) << workers << " workers";
  }
}

TEST(DecodePool, OtherErrorsAreRethrownInOrder) {
  auto source = std::make_shared<GatedSource>(8, -1, -1);
  source->failing = 5;
  DecodePool pool(
      source, small_preprocess(), [](int64_t p) { return p; }, 0, 8, DecodePoolOptions{3, 4, nullptr});
  for (int64_t p = 0; p < 5; ++p) ASSERT_EQ(pool.next()->index, p);
  EXPECT_THROW(pool.next(), sdk::Error);
  EXPECT_EQ(pool.next()->index, 6);
}

}  // namespace
}  // namespace kforge::test
