// A line chart as inline SVG: one <path> per series over a step axis, vertical event markers, axes
// with ticks, a legend; linear or log10 y.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace kforge::report {

struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y) by ascending x; a non-finite y is a gap
};

struct ChartMarker {
  double x = 0;
  std::string label;  ///< its kind, for the legend ("checkpoint")
  std::string title;  ///< the tooltip
  std::string color;  ///< a CSS colour
};

struct LineChart {
  std::string title;
  std::string x_label = "step";
  bool log_y = false;  ///< y drawn as log10(y); y <= 0 is a gap then
  std::vector<ChartSeries> series;
  std::vector<ChartMarker> markers;
};

/// The chart as an <svg> element (class "chart", data-scale "linear" or "log"). Each series is one
/// <path class="series" data-series=NAME data-points=N> whose data has one M or L per drawn point
/// (N of them), a new M after every gap, and " h0" after a lone point (drawn as a dot); every text
/// is HTML-escaped.
std::string render_svg(const LineChart& chart);

/// The colour of the i-th series.
const char* series_color(size_t i);

}  // namespace kforge::report
