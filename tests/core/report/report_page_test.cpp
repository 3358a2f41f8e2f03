// The report page: hostile strings from the run directory are escaped, no metrics yet says so, and
// the log-scale option.
#include "report/report_page.h"

#include <gtest/gtest.h>

#include <regex>

#include "core/report/run_dir_writer.h"
#include "report/run_record.h"
#include "support/expect_text.h"
#include "support/test_host.h"

namespace kforge::report {
namespace {

using test::metric_line;
using test::temp_dir;
using test::write_checkpoint;
using test::write_text;

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
  write_checkpoint(dir, 10, 0,
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
  write_checkpoint(dir, 0, 0, "[train]\nnum_threads = 0\n");
  const std::string page = render_report(read_run_record(dir), {false, "kforge test"});
  test::expect_has(page,
                   {"No metrics yet: metrics.jsonl is empty.", "checkpoint step_0", "num_threads = 0, all cores"});
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

}  // namespace
}  // namespace kforge::report
