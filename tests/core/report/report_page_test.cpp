// The report page: hostile strings from the run directory are escaped, no metrics yet says so, the
// log-scale option, the environment runs.jsonl records, and what a directory without it cannot say.
#include "report/report_page.h"

#include <gtest/gtest.h>

#include <regex>

#include "core/report/run_dir_writer.h"
#include "report/run_record.h"
#include "report/utc_time.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::report {
namespace {

int occurrences(const std::string& text, const std::string& part) {
  int n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(ReportPage, HostileConfigMetricAndPluginStringsAreEscaped) {
  const auto dir = temp_dir("report_hostile");
  const std::string hostile = "</pre><script>alert(1)</script><img src=x onerror=alert(2)>";
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 2.0}, {"loss/" + hostile, 1.0}}) +
                                        metric_line(10, 101, {{"train/loss", 1.5}, {"loss/" + hostile, 0.5}}));
  write_checkpoint(dir, 10,
                   "[data]\ndataset_path = \"" + std::regex_replace(hostile, std::regex("\""), "\\\"") +
                       "\"\n[train]\nnum_threads = 1\n");
  write_text(dir / "step_10" / "metadata.json",
             nlohmann::json{{"plugins", {{{"name", hostile}, {"version", "1 & 2"}, {"file", "lib'x'.so"}}}}}.dump());
  const std::string page = render_report(read_run_record(dir), {false, "kforge <test>"});
  EXPECT_EQ(occurrences(page, "<script>"), 1) << page;  // the page's own
  EXPECT_EQ(occurrences(page, "</pre>"), 1) << page;    // the config's own
  EXPECT_EQ(page.find("<img"), std::string::npos) << page;
  EXPECT_EQ(page.find("kforge <test>"), std::string::npos) << page;
  test::expect_has(page, {"&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;",
                          "1 &amp; 2", "lib&#39;x&#39;.so", "kforge &lt;test&gt;"});
  // The per-source loss chart holds the hostile series, escaped in its attribute and legend.
  test::expect_has(page, {"Per-source loss", "data-series=\"loss/&lt;/pre&gt;"});
}

TEST(ReportPage, AnEmptyMetricsFileSaysNoMetricsYetAndDrawsNoChart) {
  const auto dir = temp_dir("report_no_metrics");
  write_text(dir / "metrics.jsonl", "");
  write_checkpoint(dir, 0, "[train]\nnum_threads = 0\n");
  const std::string page = render_report(read_run_record(dir), {false, "kforge test"});
  test::expect_has(page, {"No metrics yet: metrics.jsonl is empty.", "checkpoint step_0", "num_threads = 0"});
  EXPECT_EQ(page.find("<svg"), std::string::npos) << page;
}

TEST(ReportPage, ATornOnlyLineSaysNoMetricsYetAndNamesTheLine) {
  const auto dir = temp_dir("report_torn_only");
  write_text(dir / "metrics.jsonl", "{\"step\":1,\"ti");
  const std::string page = render_report(read_run_record(dir), {false, "kforge test"});
  test::expect_has(page, {"No metrics yet: metrics.jsonl has no readable line.", "line 1."});
}

TEST(ReportPage, LossChartsHaveALinearAndALogVariantAndLogYOpensTheLogOne) {
  const auto dir = temp_dir("report_log_y");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 9.0}, {"train/lr", 0.0}}) +
                                        metric_line(10, 101, {{"train/loss", 4.0}, {"train/lr", 1e-3}}));
  const RunRecord run = read_run_record(dir);
  const std::string linear = render_report(run, {false, "kforge test"});
  EXPECT_EQ(occurrences(linear, "data-scale=\"log\""), 1) << linear;  // the loss chart; lr has no log variant
  EXPECT_EQ(occurrences(linear, "data-scale=\"linear\""), 2) << linear;
  EXPECT_NE(linear.find("<body>"), std::string::npos);
  EXPECT_NE(render_report(run, {true, "kforge test"}).find("<body class=\"log\">"), std::string::npos);
}

// The text of the page's environment table.
std::string environment_table(const std::string& page) {
  const size_t at = page.find("<table id=\"environment\">");
  EXPECT_NE(at, std::string::npos) << page;
  return at == std::string::npos ? "" : page.substr(at, page.find("</table>", at) - at);
}

TEST(ReportPage, TheEnvironmentTableShowsTheLatestStartsRecordedValuesEscaped) {
  const auto dir = temp_dir("report_environment");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 2.0}}));
  const nlohmann::json environment = {{"cpu", "Xeon <b>&</b>"}, {"usable_cpus", 6},
                                      {"isa", {"avx2", "fma"}}, {"aten_isa", "AVX2"},
                                      {"blas", "mkl"},          {"blas_library", "libmkl_rt.so.2"},
                                      {"intra_op_threads", 6},  {"inter_op_threads", 2}};
  nlohmann::json latest = {{"host", "node<7>"},
                           {"world_size", 2},
                           {"kforge", "9.8.7"},
                           {"libtorch", "1.13.1"},
                           {"environment", environment}};
  nlohmann::json first = latest;
  first["host"] = "old-host";
  first["environment"]["intra_op_threads"] = 4;
  write_text(dir / "runs.jsonl",
             run_start_line(0, -1, 90, first) + run_end_line(1, "killed", 95) + run_start_line(1, 1, 99, latest));
  const std::string table = environment_table(render_report(read_run_record(dir), {false, "kforge test"}));
  test::expect_has(table, {"node&lt;7&gt;", "Xeon &lt;b&gt;&amp;&lt;/b&gt; (6 usable CPUs)", "avx2 fma (ATen: AVX2)",
                           "mkl (libmkl_rt.so.2)", "intra-op 6, inter-op 2", "<th>world size</th><td>2", "9.8.7",
                           "1.13.1", "<th>plugins</th>"});
  EXPECT_EQ(table.find("<b>"), std::string::npos) << table;
  // The host and the thread count changed between the processes: both values, each with its start.
  test::expect_has(table,
                   {"changed between processes: old-host from " + utc_time(90) + ", node&lt;7&gt; from " + utc_time(99),
                    "intra-op 4, inter-op 2 from " + utc_time(90)});
  EXPECT_EQ(occurrences(table, "changed between processes"), 2) << table;
}

TEST(ReportPage, WithoutRunsJsonlResumesEndsAndTheEnvironmentAreUnknown) {
  const auto dir = temp_dir("report_no_run_log");
  write_text(dir / "metrics.jsonl",
             metric_line(1, 100, {{"train/loss", 2.0}}) + metric_line(10, 400, {{"train/loss", 1.0}}));
  const std::string page = render_report(read_run_record(dir), {false, "kforge test"});
  test::expect_has(page, {"Resumes and process ends are unknown: there is no runs.jsonl",
                          "Not recorded: there is no runs.jsonl", "<th>plugins</th>"});
  EXPECT_EQ(page.find("data-kind=\"resume\""), std::string::npos) << page;
}

TEST(ReportPage, NanSkipMetricsAreMarkersNotChartSeries) {
  const auto dir = temp_dir("report_nan_series");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 2.0}}) +
                                        metric_line(3, 101, {{"train/nan_skipped", 1.0}, {"train/nan_total", 1.0}}) +
                                        metric_line(10, 102, {{"train/loss", 1.0}}));
  const std::string page = render_report(read_run_record(dir), {false, "kforge test"});
  EXPECT_EQ(page.find("data-series=\"train/nan"), std::string::npos) << page;
  test::expect_has(page, {"data-kind=\"NaN skip\"", "step 3: the loss or gradient norm was not finite"});
}

TEST(ReportPage, TheLastProcessWithNoEndIsNotedAsRunningOrCrashedAndTornRunsLinesNamed) {
  const auto dir = temp_dir("report_open_process");
  write_text(dir / "metrics.jsonl", metric_line(1, 100, {{"train/loss", 2.0}}));
  write_text(dir / "runs.jsonl", run_start_line(0, -1, 99) + "{\"event\":\"end\",\"st");
  const std::string page = render_report(read_run_record(dir), {false, "kforge test"});
  test::expect_has(page, {"The last process (runs.jsonl line 1, started at " + utc_time(99) +
                              " at step 0) wrote no end: it is still running, or it crashed.",
                          "Skipped 1 line(s) of runs.jsonl that are not a process start or end", "line 2."});
}

}  // namespace
}  // namespace kforge::report
