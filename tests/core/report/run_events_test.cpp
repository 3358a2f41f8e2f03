// The events of a run from what its directory records: checkpoints, runs.jsonl's process starts and
// ends, and the NaN skips metrics.jsonl logs; nothing guessed from gaps.
#include "report/run_events.h"

#include <gtest/gtest.h>

#include "core/report/run_dir_writer.h"
#include "report/utc_time.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::report {
namespace {

// Train lines every 10 steps, `pace` seconds per step, with a peak RSS of `rss` GiB.
std::string train_lines(int64_t from, int64_t to, double t0, double pace, double rss) {
  std::string text;
  for (int64_t s = from; s <= to; s += 10) {
    text += test::metric_line(s, t0 + static_cast<double>(s - from) * pace,
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

TEST(RunEvents, CheckpointsAreTheStepDirectories) {
  const auto dir = test::temp_dir("report_ckpts");
  test::write_text(dir / "metrics.jsonl", train_lines(10, 100, 1000, 0.5, 1.0));
  test::write_checkpoint(dir, 50);
  test::write_checkpoint(dir, 100);
  test::write_text(dir / "step_60.tmp" / "train_state.json", "{}");  // not a step directory
  const auto events = events_of(read_run_record(dir), EventKind::Checkpoint);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].step, 50);
  EXPECT_EQ(events[1].step, 100);
  test::expect_has(events[1].text, {"checkpoint step_100", "6400 tokens seen"});
}

TEST(RunEvents, AResumeIsAStartWithResumedFromAtThatStepNamingItsTimeAndHost) {
  const auto dir = test::temp_dir("report_resume");
  // No wall-clock gap and no RSS drop: only runs.jsonl says a new process resumed from step_40.
  test::write_text(dir / "metrics.jsonl", train_lines(10, 50, 1000, 0.5, 1.0) + train_lines(50, 90, 1020, 0.5, 1.0));
  test::write_text(dir / "runs.jsonl", test::run_start_line(0, -1, 999, {{"host", "node-a"}}) +
                                           test::run_end_line(50, "finished", 1020) +
                                           test::run_start_line(40, 40, 1020.5, {{"host", "node-b"}, {"pid", 4242}}) +
                                           test::run_end_line(90, "finished", 1041));
  const RunRecord run = read_run_record(dir);
  const auto resumes = events_of(run, EventKind::Resume);
  ASSERT_EQ(resumes.size(), 1u);
  EXPECT_EQ(resumes[0].step, 40);
  test::expect_has(resumes[0].text,
                   {"resumed from step_40", utc_time(1020.5), "on host node-b", "pid 4242", "runs.jsonl line 3"});
  // A finished process is no event.
  EXPECT_EQ(run_events(run).size(), 1u);
}

TEST(RunEvents, EndsOtherThanFinishedAreEventsAtTheirStep) {
  const auto dir = test::temp_dir("report_ends");
  test::write_text(dir / "metrics.jsonl", "");
  test::write_text(dir / "runs.jsonl", test::run_start_line(0, -1, 1000) + test::run_end_line(7, "killed", 1010) +
                                           test::run_start_line(0, -1, 1100) + test::run_end_line(12, "failed", 1110) +
                                           test::run_start_line(0, -1, 1200) + test::run_end_line(15, "stopped", 1210) +
                                           test::run_start_line(0, -1, 1300) +
                                           test::run_end_line(21, "too_many_nans", 1310));
  const auto events = run_events(read_run_record(dir));
  ASSERT_EQ(events.size(), 4u);
  const std::vector<std::pair<EventKind, int64_t>> expected = {
      {EventKind::Kill, 7}, {EventKind::Failure, 12}, {EventKind::Stop, 15}, {EventKind::TooManyNans, 21}};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(events[i].kind, expected[i].first) << events[i].text;
    EXPECT_EQ(events[i].step, expected[i].second) << events[i].text;
  }
  test::expect_has(events[0].text, {"ended \"killed\" at step 7", utc_time(1010)});
  test::expect_has(events[3].text, {"ended \"too_many_nans\" at step 21"});
  EXPECT_STREQ(event_kind_name(EventKind::Kill), "killed");
  EXPECT_STREQ(event_kind_name(EventKind::TooManyNans), "too many NaNs");
}

TEST(RunEvents, AStartWithNoEndBeforeTheNextStartIsACrashAtTheLastStepItLogged) {
  const auto dir = test::temp_dir("report_crash");
  // The first process logs steps 10..40 and dies; the next resumes from step_20 and logs 30..60.
  test::write_text(dir / "metrics.jsonl", train_lines(10, 40, 1000, 0.5, 1.0) + train_lines(30, 60, 1100, 0.5, 1.0));
  test::write_text(dir / "runs.jsonl", test::run_start_line(0, -1, 995, {{"pid", 11}}) +
                                           test::run_start_line(20, 20, 1099) +
                                           test::run_end_line(60, "finished", 1120));
  const auto crashes = events_of(read_run_record(dir), EventKind::Crash);
  ASSERT_EQ(crashes.size(), 1u);
  EXPECT_EQ(crashes[0].step, 40);
  test::expect_has(crashes[0].text, {"pid 11", "wrote no end", utc_time(1099), "after logging step 40"});
  EXPECT_STREQ(event_kind_name(EventKind::Crash), "crashed");
}

TEST(RunEvents, ACrashBeforeAnyLoggedStepIsAtItsStartStep) {
  const auto dir = test::temp_dir("report_crash_early");
  test::write_text(dir / "metrics.jsonl", train_lines(10, 40, 1000, 0.5, 1.0) + train_lines(50, 60, 1200, 0.5, 1.0));
  test::write_text(dir / "runs.jsonl", test::run_start_line(0, -1, 995) + test::run_end_line(40, "killed", 1016) +
                                           test::run_start_line(40, 40, 1100) + test::run_start_line(40, 40, 1199));
  const auto crashes = events_of(read_run_record(dir), EventKind::Crash);
  ASSERT_EQ(crashes.size(), 1u);
  EXPECT_EQ(crashes[0].step, 40);
  test::expect_has(crashes[0].text, {"before logging a step (it started at step 40)"});
}

TEST(RunEvents, TheLastStartWithNoEndIsNoCrash) {
  const auto dir = test::temp_dir("report_running");
  test::write_text(dir / "metrics.jsonl", train_lines(10, 40, 1000, 0.5, 1.0));
  test::write_text(dir / "runs.jsonl", test::run_start_line(0, -1, 995));
  EXPECT_TRUE(run_events(read_run_record(dir)).empty());
}

TEST(RunEvents, NanSkipsAreTheMetricLinesWithNanSkipped) {
  const auto dir = test::temp_dir("report_nan_lines");
  test::write_text(dir / "metrics.jsonl",
                   train_lines(10, 10, 1000, 0.5, 1.0) +
                       test::metric_line(13, 1001, {{kNanSkippedMetric, 1.0}, {kNanTotalMetric, 1.0}}) +
                       test::metric_line(17, 1002, {{kNanSkippedMetric, 1.0}, {kNanTotalMetric, 2.0}}) +
                       train_lines(20, 20, 1003, 0.5, 1.0));
  const auto skips = events_of(read_run_record(dir), EventKind::NanSkip);
  ASSERT_EQ(skips.size(), 2u);
  EXPECT_EQ(skips[0].step, 13);
  EXPECT_EQ(skips[1].step, 17);
  test::expect_has(skips[1].text, {"step 17", "not finite", "optimizer step was skipped", "(2 so far)"});
}

TEST(RunEvents, GapsRssDropsMissingLogStepsAndNanTotalsAreNotGuessedIntoEvents) {
  const auto dir = test::temp_dir("report_no_guess");
  // A 100 s gap, a peak-RSS drop and a missing logging step (30), and a checkpoint whose NaN total
  // rose; with no runs.jsonl and no train/nan_skipped line, none of them is an event.
  test::write_text(dir / "metrics.jsonl", train_lines(10, 20, 1000, 0.5, 1.5) + train_lines(40, 60, 1100, 0.5, 1.2));
  test::write_text(dir / "step_60" / "train_state.json", R"({"step": 60, "nan": {"consecutive": 0, "total": 3}})");
  test::write_text(dir / "step_60" / "config.toml", "[metrics]\nlog_interval = 10\n");
  const RunRecord run = read_run_record(dir);
  EXPECT_FALSE(run.has_run_log);
  const auto events = run_events(run);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, EventKind::Checkpoint);
}

}  // namespace
}  // namespace kforge::report
