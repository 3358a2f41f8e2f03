// Image-text data without a usable sample, run as `kforge run`: a WebDataset directory whose every .jpg is garbage
// after a JPEG signature and a manifest whose every image is missing end with exit 2 naming the dataset, after a few
// warnings (not a hang flooding the log); a SIGTERM sent once the first bad sample is warned about ends the job within
// seconds. Prints "[ fault    ] bad-data ..." lines with the times.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "data/webdataset_writer.h"
#include "fault_job.h"
#include "support/test_host.h"
#include "support/tiny_job_toml.h"
#include "support/tiny_tokenizer.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;

constexpr int kSamples = 40;
constexpr double kTimeoutSec = 120;  // a failure bound only: the jobs end in seconds

enum class BadData { GarbageWebDataset, MissingImages };

// `kforge run` on a tiny VLM whose [data] is `bad`: the command line, and the dataset path it names.
struct BadDataJob {
  std::vector<std::string> argv;
  std::string dataset_path;
};

BadDataJob bad_data_job(const std::string& label, BadData bad) {
  const fs::path root = temp_dir("bad_data_" + label);
  std::string data;
  if (bad == BadData::GarbageWebDataset) {
    fs::create_directories(root / "shards");
    data::TarShardWriter shard(root / "shards" / "shard-000.tar");
    for (int k = 0; k < kSamples; ++k) {
      shard.add(fmt::format("s{:03}.jpg", k), std::string("\xff\xd8\xff\xe0", 4) + std::string(2000, '\x5a'));
      shard.add(fmt::format("s{:03}.txt", k), "a caption");
    }
    shard.close();
    data = fmt::format("dataset_path = \"{}\"\nfile_pattern = \"*.tar\"\n", (root / "shards").string());
  } else {
    std::ofstream manifest(root / "manifest.jsonl");
    for (int k = 0; k < kSamples; ++k) {
      manifest << fmt::format(R"({{"image": "images/{:03}.jpg", "text": "a caption"}})", k) << "\n";
    }
    data = fmt::format("dataset_path = \"{}\"\n", (root / "manifest.jsonl").string());
  }
  std::ofstream(root / "job.toml") << tiny_job_toml(64, 50) + tiny_vlm_toml() +
                                          fmt::format(R"(
[data]
{}tokenizer_path = "{}"
num_workers = 2

[checkpoint]
dir = "{}"

[metrics]
backends = ["console"]
)",
                                                      data, tiny_tokenizer(root).string(), (root / "ckpt").string());
  return {{KFORGE_BIN, "run", (root / "job.toml").string(), "--plugin-dir", KFORGE_PLUGIN_DIR},
          bad == BadData::GarbageWebDataset ? (root / "shards").string() : (root / "manifest.jsonl").string()};
}

int64_t count_lines_with(const std::string& output, const std::string& part) {
  int64_t n = 0;
  for (size_t at = output.find(part); at != std::string::npos; at = output.find(part, at + part.size())) ++n;
  return n;
}

void expect_exit_2_after_a_few_warnings(BadData bad, const std::string& label, const std::string& reason) {
  const BadDataJob job = bad_data_job(label, bad);
  const auto start = FaultClock::now();
  const JobEnd end = run_job(job.argv, {}, {}, kTimeoutSec);
  ASSERT_FALSE(end.timed_out) << "still running after " << kTimeoutSec << " s\n" << end.output.substr(0, 4000);
  EXPECT_EQ(end.code(), 2) << end.output.substr(0, 4000);
  EXPECT_NE(end.output.find(job.dataset_path), std::string::npos) << end.output;
  EXPECT_NE(end.output.find("samples in a row could not be used"), std::string::npos) << end.output;
  EXPECT_NE(end.output.find(reason), std::string::npos) << end.output;
  // The first few are warned about one by one; the error repeats them.
  const int64_t warned = count_lines_with(end.output, "; skipped");
  EXPECT_LE(warned, 5 + 5) << end.output;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(end.ended - start).count();
  report_fault(fmt::format("bad-data {} exit={} skip_lines={} output_bytes={} run_ms={}", label, end.code(), warned,
                           end.output.size(), ms));
}

TEST(FaultBadData, AllGarbageWebDatasetAndAllMissingManifestExit2AfterAFewWarnings) {
  expect_exit_2_after_a_few_warnings(BadData::GarbageWebDataset, "webdataset", "corrupt JPEG");
  expect_exit_2_after_a_few_warnings(BadData::MissingImages, "manifest", "No such file or directory");
}

// The signal is sent when the first bad sample is warned about, while the feed is on the bad data: the job ends
// within seconds, either preempted (75) or stopped for its data (2), whichever it reaches first.
TEST(FaultBadData, SigtermWhileTheFeedIsOnBadDataEndsTheJobWithinSeconds) {
  const BadDataJob job = bad_data_job("sigterm", BadData::MissingImages);
  FaultClock::time_point signalled{};
  bool sent = false;
  JobWatch watch;
  watch.on_line = [&](const std::string& line, const RunningJob& running) {
    if (sent || line.find("; skipped") == std::string::npos) return;
    signalled = FaultClock::now();
    ::kill(running.pid, SIGTERM);
    sent = true;
  };
  const JobEnd end = run_job(job.argv, {}, watch, kTimeoutSec);
  ASSERT_TRUE(sent) << "no sample was warned about\n" << end.output;
  ASSERT_FALSE(end.timed_out) << "still running after " << kTimeoutSec << " s\n" << end.output.substr(0, 4000);
  EXPECT_TRUE(end.code() == 75 || end.code() == 2) << end.code() << "\n" << end.output;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(end.ended - signalled).count();
  EXPECT_LT(ms, 10000) << end.output;
  report_fault(fmt::format("bad-data sigterm exit={} signal_to_exit_ms={}", end.code(), ms));
}

}  // namespace
}  // namespace kforge::test
