// The run report's HTML page (see report_page.h).
#include "report/report_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include "report/html_escape.h"
#include "report/line_chart.h"
#include "report/run_events.h"

namespace kforge::report {
namespace {

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:24px;color:#222;max-width:900px}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}
figure{margin:12px 0}table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
pre{background:#f6f6f6;padding:8px;font-size:12px;overflow:auto;max-height:480px}.note{color:#555;font-size:13px}
.empty{font-size:16px;color:#a00}body.log .scale-linear{display:none}body:not(.log) .scale-log{display:none})";

constexpr const char* kScript = R"((function () {
  var box = document.getElementById('log-y');
  if (!box) return;
  box.checked = document.body.classList.contains('log');
  box.addEventListener('change', function () { document.body.classList.toggle('log', box.checked); });
})();)";

// A chart's metrics: these names, or every name with this prefix.
struct ChartGroup {
  const char* title;
  std::vector<std::string> names;
  std::string prefix;
  bool log_option = false;
};

const std::vector<ChartGroup>& chart_groups() {
  static const std::vector<ChartGroup> groups = {
      {"Loss", {"train/loss", "smoothed/loss", "eval/loss"}, "", true},
      {"Per-source loss", {}, "loss/", true},
      {"Learning rate", {"train/lr"}, ""},
      {"Gradient norm", {"train/grad_norm"}, ""},
      {"Throughput (tokens/s)", {"train/tokens_per_sec", "smoothed/tokens_per_sec"}, ""},
      {"MFU (fraction of the peak)", {"train/mfu", "smoothed/mfu"}, ""},
      {"Memory (GiB)", {}, "memory/"},
      {"Step time (s)", {"train/step_time_sec", "smoothed/step_time"}, ""},
      {"Eval perplexity", {"eval/perplexity"}, ""},
  };
  return groups;
}

const char* marker_color(EventKind kind) {
  switch (kind) {
    case EventKind::Checkpoint:
      return "#7f7f7f";
    case EventKind::Resume:
      return "#b8860b";
    case EventKind::NanSkip:
      return "#c000c0";
  }
  return "#000";
}

std::string utc_time(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

std::string summary_section(const RunRecord& run) {
  std::string html = fmt::format("<p>Run directory: <code>{}</code></p>\n", html_escape(run.dir.string()));
  if (run.lines.empty()) {
    const char* why = !run.has_metrics_file          ? "there is no metrics.jsonl"
                      : run.unreadable_lines.empty() ? "metrics.jsonl is empty"
                                                     : "metrics.jsonl has no readable line";
    html += fmt::format("<p class=\"empty\" id=\"no-metrics\">No metrics yet: {}.</p>\n", why);
  } else {
    const MetricLine &first = run.lines.front(), &last = run.lines.back();
    html += fmt::format(
        "<p id=\"summary\">{} metric lines, steps {} to {}, logged from {} to {} ({:.1f} s of wall-clock time).</p>\n",
        run.lines.size(), first.step, last.step, utc_time(first.time), utc_time(last.time), last.time - first.time);
  }
  if (!run.unreadable_lines.empty()) {
    std::string numbers;
    for (const int64_t n : run.unreadable_lines) numbers += (numbers.empty() ? "" : ", ") + std::to_string(n);
    html += fmt::format(
        "<p class=\"note\" id=\"unreadable\">Skipped {} line(s) of metrics.jsonl that are not a metric line (torn by "
        "a crash, or not JSON with an integer step): line {}.</p>\n",
        run.unreadable_lines.size(), numbers);
  }
  return html;
}

std::vector<ChartMarker> event_markers(const std::vector<RunEvent>& events) {
  std::vector<ChartMarker> markers;
  for (const RunEvent& e : events) {
    markers.push_back({static_cast<double>(e.step), event_kind_name(e.kind), e.text, marker_color(e.kind)});
  }
  return markers;
}

ChartSeries chart_series(const RunRecord& run, const std::string& name) {
  ChartSeries s{name, {}};
  for (const auto& [step, value] : metric_series(run, name)) s.points.emplace_back(static_cast<double>(step), value);
  return s;
}

std::string chart_figure(const std::string& title, std::vector<ChartSeries> series,
                         const std::vector<ChartMarker>& markers, bool log_option) {
  LineChart chart{title, "step", false, std::move(series), markers};
  std::string html = "<figure>\n";
  if (!log_option) return html + render_svg(chart) + "</figure>\n";
  html += "<div class=\"scale-linear\">\n" + render_svg(chart) + "</div>\n";
  chart.log_y = true;
  return html + "<div class=\"scale-log\">\n" + render_svg(chart) + "</div>\n</figure>\n";
}

std::string charts_section(const RunRecord& run, const std::vector<RunEvent>& events) {
  if (run.lines.empty()) return "";
  const std::vector<ChartMarker> markers = event_markers(events);
  const std::vector<std::string> names = metric_names(run);
  std::set<std::string> charted;
  std::string html =
      "<h2>Metrics</h2>\n<p><label><input type=\"checkbox\" id=\"log-y\"> log scale for the losses</label> "
      "<span class=\"note\">Dashed lines mark checkpoints, resumes and NaN skips (hover for details).</span></p>\n";
  for (const ChartGroup& group : chart_groups()) {
    std::vector<ChartSeries> series;
    for (const std::string& name : names) {
      const bool wanted = group.prefix.empty()
                              ? std::find(group.names.begin(), group.names.end(), name) != group.names.end()
                              : name.rfind(group.prefix, 0) == 0;
      if (wanted && charted.insert(name).second) series.push_back(chart_series(run, name));
    }
    if (!group.names.empty()) {  // in the group's order
      std::sort(series.begin(), series.end(), [&](const ChartSeries& a, const ChartSeries& b) {
        return std::find(group.names.begin(), group.names.end(), a.name) <
               std::find(group.names.begin(), group.names.end(), b.name);
      });
    }
    if (!series.empty()) html += chart_figure(group.title, std::move(series), markers, group.log_option);
  }
  // Every other metric, one chart per prefix ("moe/aux_loss" goes to "moe/*").
  std::map<std::string, std::vector<ChartSeries>> others;
  for (const std::string& name : names) {
    if (charted.count(name)) continue;
    const size_t slash = name.find('/');
    others[slash == std::string::npos ? name : name.substr(0, slash) + "/*"].push_back(chart_series(run, name));
  }
  for (auto& [title, series] : others) html += chart_figure(title, std::move(series), markers, false);
  return html;
}

std::string events_section(const std::vector<RunEvent>& events) {
  std::string html =
      "<h2>Checkpoints, resumes and NaN skips</h2>\n<p class=\"note\">Checkpoints are the step_N directories "
      "still present (older ones may have been pruned by keep_last_n). Resumes are derived from metrics.jsonl: a "
      "logged step whose peak RSS dropped, or that came after a wall-clock gap well beyond the run's pace, is from "
      "a new process. NaN skips are logging steps with no metrics and rises of the NaN total in the checkpoints' "
      "train_state.json.</p>\n";
  if (events.empty()) return html + "<p id=\"events\">None.</p>\n";
  html += "<table id=\"events\"><tr><th>step</th><th>event</th><th>details</th></tr>\n";
  for (const RunEvent& e : events) {
    html += fmt::format("<tr class=\"event\" data-kind=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                        event_kind_name(e.kind), e.step, event_kind_name(e.kind), html_escape(e.text));
  }
  return html + "</table>\n";
}

std::string config_section(const RunRecord& run) {
  std::string html = "<h2>Resolved config</h2>\n";
  if (run.config_path.empty()) return html + "<p id=\"config\">No checkpoint holds a config.toml yet.</p>\n";
  html += fmt::format("<p class=\"note\">From <code>{}</code>, the newest checkpoint's.</p>\n",
                      html_escape(run.config_path.string()));
  if (!run.config_error.empty()) {
    html += fmt::format("<p class=\"empty\">It does not parse as TOML: {}</p>\n", html_escape(run.config_error));
  }
  return html + "<pre id=\"config\">" + html_escape(run.config_text) + "</pre>\n";
}

std::string plugin_list(const nlohmann::json& plugins) {
  if (!plugins.is_array()) return "not recorded (no checkpoint's metadata.json lists it)";
  std::string html = "<ul id=\"plugins\">";
  for (const auto& p : plugins) {
    auto field = [&](const char* key) {
      return p.is_object() && p.contains(key) && p[key].is_string() ? p[key].get<std::string>() : std::string("?");
    };
    html += fmt::format("<li>{} {} ({})</li>", html_escape(field("name")), html_escape(field("version")),
                        html_escape(field("file")));
  }
  return html + "</ul>";
}

std::string environment_section(const RunRecord& run, const ReportOptions& options) {
  constexpr const char* kNotRecorded = "not recorded in the run directory";
  const std::string threads =
      run.num_threads ? fmt::format("[train] num_threads = {}{} (configured; the threads the run got are {})",
                                    *run.num_threads, *run.num_threads == 0 ? ", all cores" : "", kNotRecorded)
                      : std::string(kNotRecorded);
  std::string html = "<h2>Environment</h2>\n<table id=\"environment\">\n";
  html += fmt::format("<tr><th>kforge version</th><td>{} (this report was written by {})</td></tr>\n", kNotRecorded,
                      html_escape(options.generated_by));
  html +=
      fmt::format("<tr><th>CPU</th><td>{}</td></tr>\n<tr><th>BLAS</th><td>{}</td></tr>\n", kNotRecorded, kNotRecorded);
  html += fmt::format("<tr><th>threads</th><td>{}</td></tr>\n", html_escape(threads));
  html += fmt::format("<tr><th>plugins</th><td>{}</td></tr>\n</table>\n", plugin_list(run.plugins));
  return html;
}

}  // namespace

std::string render_report(const RunRecord& run, const ReportOptions& options) {
  const std::vector<RunEvent> events = run_events(run);
  std::string html = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>kforge report: {}</title>\n"
      "<style>\n{}\n</style>\n</head>\n<body{}>\n<h1>kforge run report</h1>\n",
      html_escape(run.dir.filename().empty() ? run.dir.string() : run.dir.filename().string()), kStyle,
      options.log_y ? " class=\"log\"" : "");
  html += summary_section(run);
  html += charts_section(run, events);
  html += events_section(events);
  html += config_section(run);
  html += environment_section(run, options);
  html += fmt::format("<p class=\"note\">Written by {}.</p>\n", html_escape(options.generated_by));
  html += fmt::format("<script>\n{}\n</script>\n</body>\n</html>\n", kScript);
  return html;
}

}  // namespace kforge::report
