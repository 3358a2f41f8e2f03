// The tensorboard metric backend, read back by tests/oracles/read_tensorboard.py (python3-protobuf with
// the public Event/Summary field numbers, CRCs checked by the reader): every scalar as float32, the config
// as a text summary, file names and directory as TensorBoard expects, and a resumed run with every step
// once, both as stored and after TensorBoard's purge rule.
#include <fstream>
#include <regex>

#include "metric_backend_fixture.h"

namespace kforge::test {
namespace {

namespace fs = std::filesystem;
using TensorboardBackend = MetricBackendTest;

TEST_F(TensorboardBackend, EveryScalarAndTheConfigReadBackThroughProtobuf) {
  const std::string config = "[model]\ndim = 32\n\n[optimizer]\nname = \"adamw\"\n";
  auto tb = backend("tensorboard", "tensorboard_dir = \"tb\"", fresh(config));
  for (int64_t step = 1; step <= 3; ++step) {
    tb->log(step, {{"train/loss", 2.0 / step + 0.1}, {"train/lr", 3e-4 * step}, {"eval/run \"a\"", -7.25}});
  }
  const fs::path dir = dir_ / "tb";  // relative tensorboard_dir: under metrics.run_dir
  EXPECT_EQ(tb->run_id(), dir.string());
  const auto read = read_back("read_tensorboard.py", dir);  // reading while the file is open: flushed
  ASSERT_EQ(read["files"].size(), 1u);
  EXPECT_TRUE(std::regex_match(read["files"][0].get<std::string>(),
                               std::regex(R"(events\.out\.tfevents\.\d{10}\..+\.\d+\.\d+)")))
      << read["files"][0];
  const auto scalars = tb_by_tag(read["scalars"]);
  ASSERT_EQ(scalars.size(), 3u);
  for (int64_t step = 1; step <= 3; ++step) {
    // simple_value is a float: the value rounded to float32, exactly.
    EXPECT_EQ(scalars.at("train/loss").at(step), static_cast<double>(static_cast<float>(2.0 / step + 0.1)));
    EXPECT_EQ(scalars.at("train/lr").at(step), static_cast<double>(static_cast<float>(3e-4 * step)));
    EXPECT_EQ(scalars.at("eval/run \"a\"").at(step), -7.25);
  }
  ASSERT_EQ(read["texts"].size(), 1u);
  EXPECT_EQ(read["texts"][0][0], "config");
  EXPECT_EQ(read["texts"][0][1], 1);
  EXPECT_EQ(read["texts"][0][2], "    [model]\n    dim = 32\n    \n    [optimizer]\n    name = \"adamw\"\n");
  EXPECT_TRUE(read["session_starts"].empty());
}

TEST_F(TensorboardBackend, OnResumeEveryStepIsThereOnceAsStoredAndAsTensorBoardShowsIt) {
  {
    auto first = backend("tensorboard", "", fresh("a = 1\n"));
    for (int64_t step = 1; step <= 8; ++step) first->log(step, {{"train/loss", 1.0 / step}});
  }
  const fs::path dir = dir_ / "tb_logs";  // the default tensorboard_dir
  // A crash tore the last record.
  for (const auto& f : fs::directory_iterator(dir))
    std::ofstream(f.path(), std::ios::app | std::ios::binary) << "\x05\x00";
  {
    auto resumed = backend("tensorboard", "", resume(5, dir.string(), "a = 2\n"));
    for (int64_t step = 6; step <= 10; ++step) resumed->log(step, {{"train/loss", 1.0 / step}});
  }
  const auto read = read_back("read_tensorboard.py", dir);
  EXPECT_EQ(read["files"].size(), 2u);
  EXPECT_EQ(read["session_starts"], nlohmann::json::array({6}));
  const std::vector<int64_t> all{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  for (const char* view : {"raw_scalars", "scalars"}) {
    SCOPED_TRACE(view);
    const auto loss = tb_by_tag(read[view]).at("train/loss");
    EXPECT_EQ(steps_of(loss), all);
    for (const auto& [step, value] : loss) EXPECT_EQ(value, static_cast<double>(static_cast<float>(1.0 / step)));
  }
  // Each session's config at the first step it trained.
  EXPECT_EQ(read["texts"], nlohmann::json::parse(R"([["config", 1, "    a = 1\n"], ["config", 6, "    a = 2\n"]])"));
}

TEST_F(TensorboardBackend, AResumeFollowsTheResumedRunsDirectory) {
  const fs::path old_dir = dir_ / "old";
  {
    auto first = backend("tensorboard", fmt::format("tensorboard_dir = \"{}\"", old_dir.string()), fresh());
    first->log(1, {{"train/loss", 1.0}});
  }
  auto resumed = backend("tensorboard", "tensorboard_dir = \"new\"", resume(1, old_dir.string()));
  resumed->log(2, {{"train/loss", 0.5}});
  EXPECT_EQ(resumed->run_id(), old_dir.string());
  EXPECT_FALSE(fs::exists(dir_ / "new"));
  EXPECT_EQ(steps_of(tb_by_tag(read_back("read_tensorboard.py", old_dir)["scalars"]).at("train/loss")),
            (std::vector<int64_t>{1, 2}));
}

TEST_F(TensorboardBackend, OnlyRankZeroWrites) {
  auto tb = backend("tensorboard", "", Start{0, "", "", 1});
  tb->log(1, {{"train/loss", 1.0}});
  EXPECT_FALSE(fs::exists(dir_ / "tb_logs"));
}

}  // namespace
}  // namespace kforge::test
