// Reading a run directory for the report, and the checkpoints, resumes and NaN skips derived from it.
#include "report/run_record.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/report/run_dir_writer.h"
#include "kforge/sdk/error.h"
#include "report/run_events.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::report {
namespace {

using test::metric_line;
using test::temp_dir;
using test::write_checkpoint;
using test::write_text;

// Train lines every 10 steps, `pace` seconds per step, with a peak RSS of `rss` GiB.
std::string train_lines(int64_t from, int64_t to, double t0, double pace, double rss) {
  std::string text;
  for (int64_t s = from; s <= to; s += 10) {
    text += metric_line(s, t0 + static_cast<double>(s - from) * pace,
                        {{"train/loss", 5.0 / s}, {"memory/peak_rss_gb", rss}});
  }
  return text;
}

std::vector<RunEvent> events_of(const RunRecord& run, EventKind kind) {
  std::vector<RunEvent> out;
  for (const RunEvent& e : run_events(run)) {
    if (e.kind == kind) out.push_back(e);
  }
  return out;
}

TEST(RunRecord, ReadsMetricLinesNullsAsNanAndCheckpoints) {
  const auto dir = temp_dir("report_record");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 9.5}, {"train/lr", 0}}) +
                                        metric_line(10, 101, {{"train/loss", nullptr}, {"train/lr", 1e-3}}) +
                                        metric_line(10, 101.5, {{"eval/loss", 8.0}}));
  write_checkpoint(dir, 10, 0, "[train]\nnum_threads = 3\n[metrics]\nlog_interval = 10\n");
  write_checkpoint(dir, 5, 0);
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
  EXPECT_EQ(run.log_interval, 10);
  EXPECT_EQ(run.num_threads, 3);
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

TEST(RunRecord, AnEmptyMetricsFileIsNoError) {
  const auto dir = temp_dir("report_empty");
  write_text(dir / "metrics.jsonl", "");
  const RunRecord run = read_run_record(dir);
  EXPECT_TRUE(run.has_metrics_file);
  EXPECT_TRUE(run.lines.empty());
  EXPECT_TRUE(run_events(run).empty());
}

TEST(RunEvents, CheckpointsAreTheStepDirectories) {
  const auto dir = temp_dir("report_ckpts");
  write_text(dir / "metrics.jsonl", train_lines(10, 100, 1000, 0.5, 1.0));
  write_checkpoint(dir, 50, 0);
  write_checkpoint(dir, 100, 0);
  write_text(dir / "step_60.tmp" / "train_state.json", "{}");  // not a step directory
  const auto events = events_of(read_run_record(dir), EventKind::Checkpoint);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].step, 50);
  EXPECT_EQ(events[1].step, 100);
}

TEST(RunEvents, AResumeIsAWallClockGapAtTheCheckpointBeforeIt) {
  const auto dir = temp_dir("report_resume_gap");
  // Steps 10..50 at 0.5 s/step; the process stops after step_50; a new one logs step 60 30 s later.
  write_text(dir / "metrics.jsonl", train_lines(10, 50, 1000, 0.5, 1.0) + train_lines(60, 100, 1050, 0.5, 1.0));
  write_checkpoint(dir, 50, 0);
  test::write_commit(dir, 50, 1021);  // saved in 1 s
  const auto resumes = events_of(read_run_record(dir), EventKind::Resume);
  ASSERT_EQ(resumes.size(), 1u);
  EXPECT_EQ(resumes[0].step, 50);
  test::expect_has(resumes[0].text, {"from step_50", "logged step 60", "new process"});
}

TEST(RunEvents, ASlowSaveOfACheckpointStillThereIsNoResume) {
  const auto dir = temp_dir("report_slow_save");
  // Step 50 logged at 1020, its save took 20 s (commit.json at 1040), step 60 came 5 s later at the
  // run's pace: one process.
  write_text(dir / "metrics.jsonl", train_lines(10, 50, 1000, 0.5, 1.0) + train_lines(60, 100, 1045, 0.5, 1.0));
  write_checkpoint(dir, 50, 0);
  test::write_commit(dir, 50, 1040);
  EXPECT_TRUE(events_of(read_run_record(dir), EventKind::Resume).empty());
  // Without the save's time, the 25 s gap reads as a resume.
  std::filesystem::remove(dir / "step_50" / "commit.json");
  EXPECT_EQ(events_of(read_run_record(dir), EventKind::Resume).size(), 1u);
}

TEST(RunEvents, AnEvalIsNoResume) {
  const auto dir = temp_dir("report_slow_eval");
  // Step 50's eval line comes 20 s after its train line; step 60 comes 5 s after the eval.
  write_text(dir / "metrics.jsonl", train_lines(10, 50, 1000, 0.5, 1.0) + metric_line(50, 1040, {{"eval/loss", 2.0}}) +
                                        train_lines(60, 100, 1045, 0.5, 1.0));
  EXPECT_TRUE(events_of(read_run_record(dir), EventKind::Resume).empty());
}

TEST(RunEvents, AResumeIsADropInPeakRss) {
  const auto dir = temp_dir("report_resume_rss");
  // No time gap at all, but the peak RSS, which never falls within a process, falls after step 40.
  write_text(dir / "metrics.jsonl", train_lines(10, 40, 1000, 0.5, 1.5) + train_lines(50, 90, 1020, 0.5, 1.2));
  const auto resumes = events_of(read_run_record(dir), EventKind::Resume);
  ASSERT_EQ(resumes.size(), 1u);
  EXPECT_EQ(resumes[0].step, 40);
  test::expect_has(resumes[0].text, {"peak RSS", "no longer in the directory"});
}

TEST(RunEvents, ASteadyRunWithEvalsAndCheckpointsHasNoResume) {
  const auto dir = temp_dir("report_no_resume");
  // 0.6 s/step; every 50 steps an eval and a save add 2 s (as in the quickstart run).
  std::string text;
  double t = 1000;
  for (int64_t s = 10; s <= 300; s += 10) {
    t += 6 + (s % 50 == 10 ? 2 : 0);
    text += metric_line(s, t, {{"train/loss", 3.0}, {"memory/peak_rss_gb", 1.0 + s * 1e-4}});
    if (s % 50 == 0) text += metric_line(s, t + 1.5, {{"eval/loss", 3.1}});
  }
  write_text(dir / "metrics.jsonl", text);
  for (int64_t s = 100; s <= 300; s += 100) write_checkpoint(dir, s, 0);
  EXPECT_TRUE(events_of(read_run_record(dir), EventKind::Resume).empty());
}

TEST(RunEvents, AMissingLoggingStepIsANanSkip) {
  const auto dir = temp_dir("report_nan_step");
  std::string text = train_lines(10, 30, 1000, 0.5, 1.0) + train_lines(50, 60, 1020, 0.5, 1.0);
  write_text(dir / "metrics.jsonl", text);
  write_checkpoint(dir, 60, 0, "[metrics]\nlog_interval = 10\n");
  const auto skips = events_of(read_run_record(dir), EventKind::NanSkip);
  ASSERT_EQ(skips.size(), 1u);
  EXPECT_EQ(skips[0].step, 40);
}

TEST(RunEvents, ARiseOfTheCheckpointsNanTotalIsANanSkip) {
  const auto dir = temp_dir("report_nan_total");
  write_text(dir / "metrics.jsonl", train_lines(10, 100, 1000, 0.5, 1.0));
  write_checkpoint(dir, 50, 0);
  write_checkpoint(dir, 100, 3);
  const auto skips = events_of(read_run_record(dir), EventKind::NanSkip);
  ASSERT_EQ(skips.size(), 1u);
  EXPECT_EQ(skips[0].step, 100);
  test::expect_has(skips[0].text, {"3 NaN skip(s) in steps 51..100", "0 -> 3"});
}

}  // namespace
}  // namespace kforge::report
