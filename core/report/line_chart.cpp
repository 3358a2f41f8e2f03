// A line chart as inline SVG (see line_chart.h).
#include "report/line_chart.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "report/html_escape.h"

namespace kforge::report {
namespace {

constexpr double kWidth = 760, kHeight = 300, kLeft = 72, kRight = 16, kBottom = 40;
constexpr double kLegendRow = 16, kCharWidth = 6.6;  // a legend row's height; the 11px font's mean advance
constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                    "#ff7f0e", "#17becf", "#8c564b", "#e377c2"};

struct ChartRange {
  double lo = INFINITY, hi = -INFINITY;
  void add(double v) {
    if (!std::isfinite(v)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  // Widened when empty or a single value; 5% of room on each side when `pad`.
  ChartRange usable(bool pad) const {
    if (!(lo <= hi)) return {0, 1};
    if (hi == lo) {
      const double d = lo == 0 ? 1 : std::fabs(lo) * 0.05;
      return {lo - d, hi + d};
    }
    const double d = pad ? (hi - lo) * 0.05 : 0;
    return {lo - d, hi + d};
  }
};

double chart_value(double y, bool log_y) {
  if (!std::isfinite(y)) return NAN;
  if (log_y) return y > 0 ? std::log10(y) : NAN;
  return y;
}

// About `target` round-numbered ticks in [lo, hi].
std::vector<double> linear_ticks(double lo, double hi, int target) {
  const double raw = (hi - lo) / target;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  const double r = raw / magnitude;
  const double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * magnitude;
  std::vector<double> ticks;
  for (double k = std::ceil(lo / step); k * step <= hi + step * 1e-9; ++k) ticks.push_back(k * step);
  return ticks;
}

// Ticks in log10 space at 1, 2 and 5 times the powers of ten; when fewer than two of those fall in
// the range (less than a decade), at round values spaced evenly in value.
std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (double e = std::floor(lo); e <= std::ceil(hi); ++e) {
    for (const double m : {1.0, 2.0, 5.0}) {
      const double t = e + std::log10(m);
      if (t >= lo && t <= hi) ticks.push_back(t);
    }
  }
  if (ticks.size() >= 2) return ticks;
  ticks.clear();
  for (const double v : linear_ticks(std::pow(10, lo), std::pow(10, hi), 4)) {
    if (v > 0) ticks.push_back(std::log10(v));
  }
  return ticks;
}

std::string tick_label(double v) {
  if (std::fabs(v) < 1e-12) return "0";
  if (std::fabs(v) >= 1e4 && std::fabs(v) < 1e9 && v == std::round(v)) return fmt::format("{:.0f}", v);  // not 5e+04
  return fmt::format("{:.4g}", v);
}

// The legend's entries (series, then the distinct marker kinds) in rows that fit the width.
struct LegendEntry {
  std::string text, color;
  bool dashed;
  double x = 0, y = 0;
};

std::vector<LegendEntry> legend_layout(const LineChart& chart, double top) {
  std::vector<LegendEntry> entries;
  for (size_t i = 0; i < chart.series.size(); ++i) entries.push_back({chart.series[i].name, series_color(i), false});
  std::set<std::string> seen;
  for (const ChartMarker& m : chart.markers) {
    if (seen.insert(m.label).second) entries.push_back({m.label, m.color, true});
  }
  double x = kLeft, y = top;
  for (LegendEntry& e : entries) {
    const double width = 24 + kCharWidth * static_cast<double>(e.text.size()) + 14;
    if (x > kLeft && x + width > kWidth - kRight) x = kLeft, y += kLegendRow;
    e.x = x, e.y = y;
    x += width;
  }
  return entries;
}

}  // namespace

const char* series_color(size_t i) { return kPalette[i % (sizeof(kPalette) / sizeof(kPalette[0]))]; }

std::string render_svg(const LineChart& chart) {
  const std::vector<LegendEntry> legend = legend_layout(chart, 34);
  const double top = (legend.empty() ? 34 : legend.back().y) + 14;
  const double plot_w = kWidth - kLeft - kRight, plot_h = kHeight - top - kBottom;

  ChartRange xs, ys;
  for (const ChartSeries& s : chart.series) {
    for (const auto& [x, y] : s.points) {
      xs.add(x);
      ys.add(chart_value(y, chart.log_y));
    }
  }
  for (const ChartMarker& m : chart.markers) xs.add(m.x);
  const ChartRange xr = xs.usable(false), yr = ys.usable(true);
  auto px = [&](double x) { return kLeft + (x - xr.lo) / (xr.hi - xr.lo) * plot_w; };
  auto py = [&](double y) { return top + (yr.hi - y) / (yr.hi - yr.lo) * plot_h; };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-scale=\"{}\" viewBox=\"0 0 {} {}\" "
      "width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      chart.log_y ? "log" : "linear", kWidth, kHeight, kWidth, kHeight, html_escape(chart.title));
  svg += fmt::format("<text x=\"{}\" y=\"18\" font-size=\"14\" font-weight=\"bold\">{}{}</text>\n", kLeft,
                     html_escape(chart.title), chart.log_y ? " (log scale)" : "");
  svg += fmt::format("<rect x=\"{}\" y=\"{:.2f}\" width=\"{}\" height=\"{:.2f}\" fill=\"#fff\" stroke=\"#999\"/>\n",
                     kLeft, top, plot_w, plot_h);
  // Axes: grid lines and labels.
  for (const double t : chart.log_y ? log_ticks(yr.lo, yr.hi) : linear_ticks(yr.lo, yr.hi, 5)) {
    svg += fmt::format(
        "<line x1=\"{}\" x2=\"{}\" y1=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"#e4e4e4\"/>"
        "<text x=\"{}\" y=\"{:.2f}\" text-anchor=\"end\">{}</text>\n",
        kLeft, kLeft + plot_w, py(t), py(t), kLeft - 4, py(t) + 4, tick_label(chart.log_y ? std::pow(10, t) : t));
  }
  for (const double t : linear_ticks(xr.lo, xr.hi, 8)) {
    if (t != std::floor(t)) continue;  // steps are whole
    svg += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n", px(t), top + plot_h + 14,
                       tick_label(t));
  }
  svg += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\">{}</text>\n", kLeft + plot_w / 2,
                     kHeight - 6, html_escape(chart.x_label));
  for (const ChartMarker& m : chart.markers) {
    svg += fmt::format(
        "<line class=\"marker\" data-kind=\"{}\" x1=\"{:.2f}\" x2=\"{:.2f}\" y1=\"{:.2f}\" y2=\"{:.2f}\" stroke=\"{}\" "
        "stroke-width=\"1.5\" stroke-dasharray=\"4 3\"><title>{}</title></line>\n",
        html_escape(m.label), px(m.x), px(m.x), top, top + plot_h, html_escape(m.color), html_escape(m.title));
  }
  for (size_t i = 0; i < chart.series.size(); ++i) {
    const ChartSeries& s = chart.series[i];
    std::string d;
    int drawn = 0, in_segment = 0;
    auto end_segment = [&] {
      if (in_segment == 1) d += " h0";  // a lone point: a dot (round cap) rather than nothing
      in_segment = 0;
    };
    for (const auto& [x, y] : s.points) {
      const double v = chart_value(y, chart.log_y);
      if (!std::isfinite(v) || !std::isfinite(x)) {
        end_segment();
        continue;
      }
      d += fmt::format("{}{}{:.2f},{:.2f}", d.empty() ? "" : " ", in_segment ? 'L' : 'M', px(x), py(v));
      ++in_segment;
      ++drawn;
    }
    end_segment();
    svg += fmt::format(
        "<path class=\"series\" data-series=\"{}\" data-points=\"{}\"{} fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"1.6\" stroke-linejoin=\"round\" stroke-linecap=\"round\"><title>{}</title></path>\n",
        html_escape(s.name), drawn, d.empty() ? "" : " d=\"" + d + "\"", series_color(i), html_escape(s.name));
  }
  for (const LegendEntry& e : legend) {
    svg += fmt::format(
        "<line x1=\"{:.1f}\" x2=\"{:.1f}\" y1=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" stroke-width=\"2\"{}/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n",
        e.x, e.x + 18, e.y - 4, e.y - 4, html_escape(e.color), e.dashed ? " stroke-dasharray=\"4 3\"" : "", e.x + 24,
        e.y, html_escape(e.text));
  }
  if (ys.lo > ys.hi) {
    svg += fmt::format("<text x=\"{:.2f}\" y=\"{:.2f}\" text-anchor=\"middle\" fill=\"#777\">no values{}</text>\n",
                       kLeft + plot_w / 2, top + plot_h / 2, chart.log_y ? " above zero" : "");
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace kforge::report
