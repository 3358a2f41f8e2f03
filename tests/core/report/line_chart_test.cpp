// The SVG line chart: one path per series, a point per drawn value, gaps as new subpaths, log10 y.
#include "report/line_chart.h"

#include <gtest/gtest.h>

#include <cmath>
#include <regex>

namespace kforge::report {
namespace {

// The d attribute of the path of series `name` ("" if it has none).
std::string path_data(const std::string& svg, const std::string& name) {
  const std::regex path("<path class=\"series\" data-series=\"" + name +
                        "\" data-points=\"[0-9]+\"(?: d=\"([^\"]*)\")?");
  std::smatch m;
  if (!std::regex_search(svg, m, path)) ADD_FAILURE() << "no path for " << name << " in\n" << svg;
  return m.size() > 1 ? m[1].str() : "";
}

int count(const std::string& text, const std::regex& pattern) {
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), pattern), std::sregex_iterator()));
}

const std::regex kMove("M[-0-9.]+,[-0-9.]+"), kLine("L[-0-9.]+,[-0-9.]+");

// The y coordinates of a path's points, in order.
std::vector<double> ys(const std::string& d) {
  std::vector<double> out;
  const std::regex point("[ML][-0-9.]+,([-0-9.]+)");
  for (auto it = std::sregex_iterator(d.begin(), d.end(), point); it != std::sregex_iterator(); ++it) {
    out.push_back(std::stod((*it)[1].str()));
  }
  return out;
}

TEST(LineChart, OnePathPerSeriesWithAPointPerValue) {
  LineChart chart{"Loss",
                  "step",
                  false,
                  {{"train/loss", {{1, 5}, {10, 4}, {20, 3}, {30, 2.5}}}, {"eval/loss", {{10, 4.5}, {30, 3}}}},
                  {}};
  const std::string svg = render_svg(chart);
  EXPECT_EQ(count(svg, std::regex("<path class=\"series\"")), 2) << svg;
  const std::string train = path_data(svg, "train/loss"), eval = path_data(svg, "eval/loss");
  EXPECT_EQ(count(train, kMove) + count(train, kLine), 4) << train;
  EXPECT_EQ(count(eval, kMove) + count(eval, kLine), 2) << eval;
  EXPECT_NE(svg.find("data-series=\"train/loss\" data-points=\"4\""), std::string::npos) << svg;
}

TEST(LineChart, ANanValueSplitsThePathInTwoSegments) {
  for (const double gap : {NAN, INFINITY, -INFINITY}) {
    LineChart chart{"Loss", "step", false, {{"train/loss", {{1, 5}, {2, 4}, {3, gap}, {4, 3}, {5, 2}}}}, {}};
    const std::string d = path_data(render_svg(chart), "train/loss");
    EXPECT_EQ(count(d, kMove), 2) << d;
    EXPECT_EQ(count(d, kLine), 2) << d;
    EXPECT_EQ(d.find("nan"), std::string::npos) << d;
    EXPECT_EQ(d.find("inf"), std::string::npos) << d;
  }
}

TEST(LineChart, ALonePointBetweenGapsIsADot) {
  LineChart chart{"Loss", "step", false, {{"x", {{1, NAN}, {2, 4}, {3, NAN}, {4, 3}, {5, 2}}}}, {}};
  const std::string d = path_data(render_svg(chart), "x");
  EXPECT_EQ(count(d, kMove), 2) << d;
  EXPECT_NE(d.find(" h0 M"), std::string::npos) << d;
}

TEST(LineChart, LogScaleMapsValuesAsLog10) {
  // 1, 10, 100, 1000 are evenly spaced in log10: equal y steps; on a linear axis they are not.
  const std::vector<std::pair<double, double>> points = {{1, 1}, {2, 10}, {3, 100}, {4, 1000}};
  LineChart chart{"Loss", "step", true, {{"loss", points}}, {}};
  const std::string svg = render_svg(chart);
  EXPECT_NE(svg.find("data-scale=\"log\""), std::string::npos);
  const std::vector<double> y = ys(path_data(svg, "loss"));
  ASSERT_EQ(y.size(), 4u);
  EXPECT_NEAR(y[0] - y[1], y[1] - y[2], 0.02);
  EXPECT_NEAR(y[1] - y[2], y[2] - y[3], 0.02);
  EXPECT_GT(y[0], y[3]);  // larger values higher up
  chart.log_y = false;
  const std::vector<double> linear = ys(path_data(render_svg(chart), "loss"));
  ASSERT_EQ(linear.size(), 4u);
  EXPECT_GT(linear[2] - linear[3], 5 * (linear[0] - linear[1]));
}

TEST(LineChart, LogScaleTicksWithinADecadeAreRoundValues) {
  LineChart chart{"Loss", "step", true, {{"loss", {{1, 9.2}, {2, 7}, {3, 5.1}}}}, {}};
  const std::string svg = render_svg(chart);
  for (const char* label : {">5</text>", ">6</text>", ">7</text>", ">8</text>", ">9</text>"}) {
    EXPECT_NE(svg.find(label), std::string::npos) << label << "\n" << svg;
  }
}

TEST(LineChart, LogScaleDropsValuesAtOrBelowZeroAsGaps) {
  LineChart chart{"Loss", "step", true, {{"loss", {{1, 2}, {2, 1}, {3, 0}, {4, -1}, {5, 0.5}, {6, 0.25}}}}, {}};
  const std::string d = path_data(render_svg(chart), "loss");
  EXPECT_EQ(count(d, kMove), 2) << d;
  EXPECT_EQ(count(d, kMove) + count(d, kLine), 4) << d;
}

TEST(LineChart, LargeRoundTicksAreWrittenInFull) {
  LineChart chart{"Throughput", "step", false, {{"tok/s", {{1, 10000}, {2, 50000}}}}, {}};
  const std::string svg = render_svg(chart);
  EXPECT_NE(svg.find(">50000</text>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("e+04"), std::string::npos) << svg;
}

TEST(LineChart, MarkersAreVerticalLinesWithTheirTooltip) {
  LineChart chart{"Loss",
                  "step",
                  false,
                  {{"loss", {{1, 2}, {10, 1}}}},
                  {{5, "checkpoint", "checkpoint step_5", "#777"}, {8, "resume", "resumed from step_5", "#b80"}}};
  const std::string svg = render_svg(chart);
  EXPECT_EQ(count(svg, std::regex("<line class=\"marker\" data-kind=\"checkpoint\"")), 1) << svg;
  EXPECT_EQ(count(svg, std::regex("<line class=\"marker\" data-kind=\"resume\"")), 1) << svg;
  EXPECT_NE(svg.find("<title>resumed from step_5</title>"), std::string::npos) << svg;
}

TEST(LineChart, AnAllGapSeriesHasAnEmptyPathAndTheChartSaysSo) {
  LineChart chart{"Loss", "step", false, {{"loss", {{1, NAN}, {2, NAN}}}}, {}};
  const std::string svg = render_svg(chart);
  EXPECT_NE(svg.find("data-series=\"loss\" data-points=\"0\" fill"), std::string::npos) << svg;
  EXPECT_NE(svg.find("no values"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("nan"), std::string::npos) << svg;
}

TEST(LineChart, NamesAndTitlesAreEscaped) {
  LineChart chart{"<b>\"x\"</b>",
                  "step",
                  false,
                  {{"loss/<script>alert(1)</script>", {{1, 2}, {2, 1}}}},
                  {{1, "a&b", "<img src=x onerror=alert(1)>", "red\" onload=\"x"}}};
  const std::string svg = render_svg(chart);
  EXPECT_EQ(svg.find("<script>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<img"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<b>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("\" onload=\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("loss/&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos) << svg;
}

}  // namespace
}  // namespace kforge::report
