// Reading a run directory for the report: metrics.jsonl, runs.jsonl and the step_N checkpoints.
#include "report/run_record.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/report/run_dir_writer.h"
#include "kforge/sdk/error.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::report {
namespace {

TEST(RunRecord, ReadsMetricLinesNullsAsNanAndCheckpoints) {
  const auto dir = temp_dir("report_record");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 9.5}, {"train/lr", 0}}) +
                                        metric_line(10, 101, {{"train/loss", nullptr}, {"train/lr", 1e-3}}) +
                                        metric_line(10, 101.5, {{"eval/loss", 8.0}}));
  write_checkpoint(dir, 10, "[train]\nnum_threads = 3\n");
  write_checkpoint(dir, 5);
  const RunRecord run = read_run_record(dir);
  ASSERT_EQ(run.lines.size(), 3u);
  EXPECT_TRUE(run.unreadable_lines.empty());
  const auto loss = metric_series(run, "train/loss");
  ASSERT_EQ(loss.size(), 2u);
  EXPECT_DOUBLE_EQ(loss.at(1), 9.5);
  EXPECT_TRUE(std::isnan(loss.at(10)));
  EXPECT_EQ(metric_series(run, "eval/loss").size(), 1u);
  EXPECT_EQ(metric_names(run), (std::vector<std::string>{"eval/loss", "train/loss", "train/lr"}));
  ASSERT_EQ(run.checkpoints.size(), 2u);
  EXPECT_EQ(run.checkpoints[0].step, 5);
  EXPECT_EQ(run.checkpoints[1].tokens_seen, 640);
  EXPECT_EQ(run.config_path, dir / "step_10" / "config.toml");
  EXPECT_FALSE(run.has_run_log);
  EXPECT_TRUE(run.processes.empty());
}

TEST(RunRecord, AMissingRunDirIsAnErrorNamingIt) {
  const auto dir = temp_dir("report_missing") / "no_such_run";
  try {
    read_run_record(dir);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    test::expect_has(e.what(), {dir.string(), "is not a directory", "checkpoint.dir"});
  }
}

TEST(RunRecord, ADirWithNeitherMetricsNorCheckpointsIsAnError) {
  const auto dir = temp_dir("report_not_a_run");
  write_text(dir / "notes.txt", "hello");
  try {
    read_run_record(dir);
    FAIL() << "no error";
  } catch (const sdk::Error& e) {
    test::expect_has(e.what(), {dir.string(), "neither metrics.jsonl nor a step_N checkpoint"});
  }
}

TEST(RunRecord, ATornLastLineAndNonMetricLinesAreSkippedAndCounted) {
  const auto dir = temp_dir("report_torn");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 9.5}}) + "[1, 2]\n{\"step\": \"x\"}\n\n" +
                                        metric_line(10, 101, {{"train/loss", 8.5}}) + "{\"step\":20,\"time\":10");
  const RunRecord run = read_run_record(dir);
  EXPECT_EQ(run.lines.size(), 2u);
  EXPECT_EQ(run.unreadable_lines, (std::vector<int64_t>{2, 3, 6}));
}

TEST(RunRecord, AStepFolderPastInt64IsNotACheckpoint) {
  // Found reading run_record.cpp for fuzz_run_record: the number went through std::stoll, whose out_of_range
  // escaped kforge report.
  const auto dir = temp_dir("report_huge_step");
  std::filesystem::create_directories(dir / "step_99999999999999999999");
  write_checkpoint(dir, 3);
  const RunRecord run = read_run_record(dir);
  ASSERT_EQ(run.checkpoints.size(), 1u);
  EXPECT_EQ(run.checkpoints[0].step, 3);
}

TEST(RunRecord, AnEmptyMetricsFileIsNoError) {
  const auto dir = temp_dir("report_empty");
  write_text(dir / "metrics.jsonl", "");
  const RunRecord run = read_run_record(dir);
  EXPECT_TRUE(run.has_metrics_file);
  EXPECT_TRUE(run.lines.empty());
}

TEST(RunRecord, ReadsRunsJsonlAsProcessesEachWithTheEndAfterItsStart) {
  const auto dir = temp_dir("report_runs");
  write_text(dir / "metrics.jsonl", "");
  write_text(dir / "runs.jsonl", run_start_line(0, -1, 1000, {{"host", "node-a"}}) + run_end_line(30, "killed", 1030) +
                                     run_start_line(30, 30, 1100, {{"host", "node-b"}}) + run_start_line(30, 30, 1200));
  const RunRecord run = read_run_record(dir);
  EXPECT_TRUE(run.has_run_log);
  EXPECT_TRUE(run.unreadable_run_log_lines.empty());
  ASSERT_EQ(run.processes.size(), 3u);
  const ProcessRecord &first = run.processes[0], &second = run.processes[1];
  EXPECT_EQ(first.line, 1);
  EXPECT_DOUBLE_EQ(first.start_time, 1000);
  EXPECT_EQ(first.start_step, 0);
  EXPECT_FALSE(first.resumed_from);
  ASSERT_TRUE(first.end_time);
  EXPECT_DOUBLE_EQ(*first.end_time, 1030);
  EXPECT_EQ(first.end_step, 30);
  EXPECT_EQ(first.outcome, "killed");
  EXPECT_EQ(second.line, 3);
  EXPECT_EQ(second.resumed_from, 30);
  EXPECT_EQ(second.start.at("host"), "node-b");
  EXPECT_FALSE(second.end_time);
  EXPECT_EQ(second.outcome, "");
}

TEST(RunRecord, ATornLastRunsLineAndAnEndWithNoStartAreSkippedAndCounted) {
  const auto dir = temp_dir("report_runs_torn");
  write_text(dir / "metrics.jsonl", "");
  const std::string start = run_start_line(0, -1, 1000);
  write_text(dir / "runs.jsonl", run_end_line(5, "finished", 990) + start + "{\"event\":\"begin\",\"step\":1}\n" +
                                     run_end_line(10, "finished", 1010) + run_end_line(10, "failed", 1011) +
                                     start.substr(0, start.size() / 2));
  const RunRecord run = read_run_record(dir);
  ASSERT_EQ(run.processes.size(), 1u);
  EXPECT_EQ(run.processes[0].outcome, "finished");
  EXPECT_EQ(run.unreadable_run_log_lines, (std::vector<int64_t>{1, 3, 5, 6}));
}

}  // namespace
}  // namespace kforge::report
