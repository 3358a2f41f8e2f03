// `kforge report` as a user runs it: help, exit codes, and a real run (a checkpoint, a resume)
// reported and loaded by headless Chromium.
#include <gtest/gtest.h>

#include "core/report/run_dir_writer.h"
#include "support/expect_text.h"
#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

int kforge_report(const std::string& args, std::string* output) {
  return run_command(std::string("'") + KFORGE_BIN + "' report " + args, output);
}

// The path in single quotes, for a shell command.
std::string quoted(const std::filesystem::path& path) {
  std::string text = "'";
  text += path.string();
  text += "'";
  return text;
}

TEST(ReportCommand, HelpNamesItsOptionsAndExitCodes) {
  std::string out;
  EXPECT_EQ(kforge_report("--help", &out), 0) << out;
  expect_has(out, {"kforge report", "RUN_DIR", "--out", "--log-y", "Exit codes"});
}

TEST(ReportCommand, AMissingRunDirExits2NamingIt) {
  const auto dir = temp_dir("report_cmd_missing") / "no_such_run";
  std::string out;
  EXPECT_EQ(kforge_report(quoted(dir), &out), 2) << out;
  expect_has(out, {"kforge report: ", dir.string(), "is not a directory"});
  EXPECT_FALSE(std::filesystem::exists(dir / "report.html"));
}

TEST(ReportCommand, NoRunDirIsAUsageError) {
  std::string out;
  EXPECT_EQ(kforge_report("", &out), 2) << out;
  expect_has(out, {"missing RUN_DIR", "Usage:"});
}

TEST(ReportCommand, AnUnwritableOutExits1NamingIt) {
  const auto dir = temp_dir("report_cmd_unwritable");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 2.0}}));
  std::string out;
  EXPECT_EQ(kforge_report(quoted(dir) + " --out /proc/kforge_no_such_dir/report.html", &out), 1) << out;
  expect_has(out, {"kforge report: cannot write /proc/kforge_no_such_dir/report.html.tmp"});
}

TEST(ReportCommand, WritesReportHtmlIntoTheRunDirByDefault) {
  const auto dir = temp_dir("report_cmd_default");
  write_text(dir / "metrics.jsonl", "");
  std::string out;
  EXPECT_EQ(kforge_report(quoted(dir), &out), 0) << out;
  expect_has(read_file(dir / "report.html"), {"<!DOCTYPE html>", "No metrics yet"});
}

}  // namespace
}  // namespace kforge::test
