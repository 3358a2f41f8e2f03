// `kforge report` as a user runs it: help, exit codes, and a real run (a checkpoint, a resume)
// reported and loaded by headless Chromium.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>
#include <vector>

#include "core/report/run_dir_writer.h"
#include "support/expect_text.h"
#include "support/oracle.h"
#include "support/read_file.h"
#include "support/test_host.h"
#include "support/tiny_job_toml.h"
#include "support/token_corpus.h"

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

// Headless Chromium (Debian chromium) loads `page`: writes the DOM after the scripts ran to `dom`, a
// screenshot to `png`, and returns its log (stderr), where console messages are "CONSOLE" lines.
std::string chromium_load(const std::filesystem::path& page, const std::filesystem::path& dom,
                          const std::filesystem::path& png, const std::string& window_size) {
  const auto profile = temp_dir("report_chromium_profile");
  const auto log = profile.parent_path() / (profile.filename().string() + ".log");
  std::string out;
  // The timeout only bounds a hung browser; a load takes a few seconds.
  const int status = run_command(
      "(timeout 120 /usr/bin/chromium --headless --disable-gpu --no-sandbox --user-data-dir=" + quoted(profile) +
          " --enable-logging=stderr --v=0 --window-size=" + window_size + " --screenshot=" + quoted(png) +
          " --dump-dom 'file://" + page.string() + "' > " + quoted(dom) + " 2> " + quoted(log) + ")",
      &out);
  EXPECT_EQ(status, 0) << out << read_file(log);
  return read_file(log);
}

std::vector<std::string> console_lines(const std::string& log) {
  std::vector<std::string> lines;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("CONSOLE") != std::string::npos) lines.push_back(line);
  }
  return lines;
}

// name -> the steps with a finite value of it in metrics.jsonl (read here, independently of the report).
std::map<std::string, int> finite_values_per_metric(const std::filesystem::path& metrics) {
  std::map<std::string, int> counts;
  std::istringstream in(read_file(metrics));
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json object = nlohmann::json::parse(line);
    for (const auto& [key, value] : object.items()) {
      if (key != "step" && key != "time")
        counts[key] += value.is_number() && std::isfinite(value.get<double>()) ? 1 : 0;
    }
  }
  return counts;
}

// The value of attribute `name` in an element's start tag ("" if absent).
std::string attribute(const std::string& tag, const std::string& name) {
  const size_t at = tag.find(" " + name + "=\"");
  if (at == std::string::npos) return "";
  const size_t start = at + name.size() + 3;
  return tag.substr(start, tag.find('"', start) - start);
}

TEST(ReportBrowser, ChromiumsLogShowsAPagesConsoleErrors) {
  // The control for the check below: a script error is a CONSOLE line in the log it reads.
  const auto dir = temp_dir("report_chromium_control");
  write_text(dir / "bad.html", "<!DOCTYPE html><html><body><script>no_such_function();</script></body></html>");
  const std::string log = chromium_load(dir / "bad.html", dir / "dom.html", dir / "shot.png", "400,300");
  const auto lines = console_lines(log);
  ASSERT_EQ(lines.size(), 1u) << log;
  expect_has(lines[0], {"no_such_function is not defined"});
}

TEST(ReportBrowser, AResumedRunsReportLoadsInChromiumWithAPathPointPerLoggedStep) {
  const auto dir = temp_dir("report_browser");
  const auto data = write_token_corpus(dir / "data", 64);
  const auto run = dir / "run";
  write_text(dir / "job.toml", tiny_job_toml(64, 20) + "[data]\ndataset_path = \"" + data.string() +
                                   "\"\n[eval]\nenabled = true\ndataset_path = \"" + data.string() +
                                   "\"\ninterval = 5\nsteps = 2\n[checkpoint]\ndir = \"" + run.string() +
                                   "\"\ninterval = 10\n[metrics]\nlog_interval = 2\n");
  std::string out;
  const std::string train = std::string("'") + KFORGE_BIN + "' run " + quoted(dir / "job.toml");
  ASSERT_EQ(run_command(train + " --train.max_steps=10", &out), 0) << out;
  ASSERT_EQ(run_command(train, &out), 0) << out;  // resumes from step_10 to step 20
  expect_has(out, {"resumed from step 10"});
  const auto page = dir / "report.html";
  ASSERT_EQ(kforge_report(quoted(run) + " --out " + quoted(page), &out), 0) << out;

  const std::string log = chromium_load(page, dir / "dom.html", dir / "shot.png", "800,1600");
  EXPECT_TRUE(console_lines(log).empty()) << log;
  const std::string dom = read_file(dir / "dom.html");
  expect_has(dom, {"Loss", "Learning rate", "Gradient norm", "Throughput (tokens/s)", "MFU (fraction of the peak)",
                   "Memory (GiB)", "Step time (s)", "Eval perplexity", "id=\"log-y\"", "checkpoint step_20", "[train]",
                   "num_threads = 1"});
  EXPECT_NE(dom.find("data-kind=\"checkpoint\""), std::string::npos);
  // The run recorded two process starts in runs.jsonl (read here, independently of the report); the
  // one row of the resume names the second's pid, and the environment its kforge version.
  std::vector<nlohmann::json> starts;
  std::istringstream runs(read_file(run / "runs.jsonl"));
  for (std::string line; std::getline(runs, line);) {
    if (const auto event = nlohmann::json::parse(line); event.at("event") == "start") starts.push_back(event);
  }
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(starts[1].at("resumed_from"), 10);
  const size_t resume = dom.find("<tr class=\"event\" data-kind=\"resume\">");
  ASSERT_NE(resume, std::string::npos) << dom;
  const size_t row_end = dom.find("</tr>", resume);
  expect_has(dom.substr(resume, row_end - resume),
             {"resumed from step_10", "(pid " + std::to_string(starts[1].at("pid").get<int64_t>()) + ")"});
  EXPECT_EQ(dom.find("data-kind=\"resume\"", row_end), std::string::npos) << "one resume row";
  expect_has(dom, {"<th>kforge version</th><td>" + starts[1].at("kforge").get<std::string>() + "</td>"});
  // Every metric of metrics.jsonl is one path per chart it is drawn in (the loss charts twice:
  // linear and log), with one point (an M or L) per step it was logged with a finite value.
  const auto expected = finite_values_per_metric(run / "metrics.jsonl");
  EXPECT_EQ(expected.at("train/loss"), 11);  // steps 1, 2, 4, ..., 20
  EXPECT_EQ(expected.at("eval/loss"), 4);    // steps 5, 10, 15, 20
  std::map<std::string, int> paths;
  for (size_t at = dom.find("<path class=\"series\""); at != std::string::npos;
       at = dom.find("<path class=\"series\"", at + 1)) {
    const std::string tag = dom.substr(at, dom.find('>', at) - at);
    const std::string name = attribute(tag, "data-series"), d = attribute(tag, "d");
    ++paths[name];
    const auto points = std::count(d.begin(), d.end(), 'M') + std::count(d.begin(), d.end(), 'L');
    EXPECT_EQ(points, expected.count(name) ? expected.at(name) : -1) << name << ": " << d;
    EXPECT_EQ(attribute(tag, "data-points"), std::to_string(points)) << name;
  }
  for (const auto& [name, count] : expected) {
    const bool loss = name == "train/loss" || name == "smoothed/loss" || name == "eval/loss";
    EXPECT_EQ(paths[name], loss ? 2 : 1) << name;
  }
  // The screenshot shows the plots: many colours, and the first series' blue drawn over many pixels.
  std::string colours;
  ASSERT_EQ(run_oracle("png_colours.py", {(dir / "shot.png").string(), "1f77b4"}, &colours), 0) << colours;
  const auto png = nlohmann::json::parse(colours);
  EXPECT_EQ(png.at("width"), 800) << colours;
  EXPECT_GT(png.at("distinct").get<int>(), 100) << colours;
  EXPECT_GT(png.at("near").at("1f77b4").get<int>(), 1000) << colours;
}

}  // namespace
}  // namespace kforge::test
