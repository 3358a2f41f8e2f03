// The run report's HTML page (see report_page.h).
#include "report/report_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "report/html_escape.h"
#include "report/line_chart.h"
#include "report/run_events.h"
#include "report/utc_time.h"

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
    case EventKind::Stop:
      return "#006400";
    case EventKind::Kill:
      return "#00008b";
    case EventKind::Failure:
      return "#8b0000";
    case EventKind::TooManyNans:
      return "#4b0082";
    case EventKind::Crash:
      return "#000000";
  }
  return "#000";
}

// The note naming the lines of `file` that were skipped ("" if none).
std::string unreadable_note(const char* file, const char* what, const std::vector<int64_t>& lines) {
  if (lines.empty()) return "";
  std::string numbers;
  for (const int64_t n : lines) numbers += (numbers.empty() ? "" : ", ") + std::to_string(n);
  return fmt::format(
      "<p class=\"note unreadable\" data-file=\"{}\">Skipped {} line(s) of {} that are not {} (torn by a crash, or "
      "not JSON with an integer step): line {}.</p>\n",
      file, lines.size(), file, what, numbers);
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
  html += unreadable_note("metrics.jsonl", "a metric line", run.unreadable_lines);
  return html + unreadable_note("runs.jsonl", "a process start or end", run.unreadable_run_log_lines);
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
      "<span class=\"note\">Dashed lines mark checkpoints, resumes, process ends and NaN skips (hover for "
      "details).</span></p>\n";
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
    if (charted.count(name) || name == kNanSkippedMetric || name == kNanTotalMetric) continue;
    const size_t slash = name.find('/');
    others[slash == std::string::npos ? name : name.substr(0, slash) + "/*"].push_back(chart_series(run, name));
  }
  for (auto& [title, series] : others) html += chart_figure(title, std::move(series), markers, false);
  return html;
}

// The note on the last process when it wrote no end: still running, or crashed.
std::string open_process_note(const RunRecord& run) {
  if (run.processes.empty() || run.processes.back().end_time) return "";
  const ProcessRecord& p = run.processes.back();
  return fmt::format(
      "<p class=\"note\" id=\"open-process\">The last process (runs.jsonl line {}, started at {} at step {}) wrote no "
      "end: it is still running, or it crashed.</p>\n",
      p.line, utc_time(p.start_time), p.start_step);
}

std::string events_section(const RunRecord& run, const std::vector<RunEvent>& events) {
  std::string html =
      "<h2>Checkpoints, resumes, process ends and NaN skips</h2>\n<p class=\"note\">Checkpoints are the step_N "
      "directories still present (older ones may have been pruned by keep_last_n). Resumes, process ends other than "
      "finished, and crashes (a process start with no end before the next start) are those runs.jsonl records; NaN "
      "skips are the metrics.jsonl lines with train/nan_skipped.</p>\n";
  if (!run.has_run_log) {
    html +=
        "<p class=\"empty\" id=\"no-run-log\">Resumes and process ends are unknown: there is no runs.jsonl (a run "
        "from a kforge that did not record them).</p>\n";
  }
  html += open_process_note(run);
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

// A start line's value at `path` ("/environment/blas") as text ("?" when absent).
std::string start_value(const ProcessRecord& p, const char* path) {
  const nlohmann::json::json_pointer pointer(path);
  if (!p.start.contains(pointer)) return "?";
  const nlohmann::json& value = p.start.at(pointer);
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) return value.dump();
  std::string list;
  for (const auto& v : value) list += (list.empty() ? "" : " ") + (v.is_string() ? v.get<std::string>() : v.dump());
  return list.empty() ? "none" : list;
}

// One recorded property of the processes: how to show it from a start line.
struct EnvironmentRow {
  const char* title;
  std::function<std::string(const ProcessRecord&)> show;
};

std::vector<EnvironmentRow> environment_rows() {
  auto field = [](const char* path) { return [path](const ProcessRecord& p) { return start_value(p, path); }; };
  return {
      {"host", field("/host")},
      {"CPU",
       [](const ProcessRecord& p) {
         return start_value(p, "/environment/cpu") + " (" + start_value(p, "/environment/usable_cpus") +
                " usable CPUs)";
       }},
      {"ISA",
       [](const ProcessRecord& p) {
         return start_value(p, "/environment/isa") + " (ATen: " + start_value(p, "/environment/aten_isa") + ")";
       }},
      {"BLAS",
       [](const ProcessRecord& p) {
         return start_value(p, "/environment/blas") + " (" + start_value(p, "/environment/blas_library") + ")";
       }},
      {"threads",
       [](const ProcessRecord& p) {
         return "intra-op " + start_value(p, "/environment/intra_op_threads") + ", inter-op " +
                start_value(p, "/environment/inter_op_threads");
       }},
      {"world size", field("/world_size")},
      {"kforge version", field("/kforge")},
      {"LibTorch version", field("/libtorch")},
  };
}

// The latest process's value; when the processes differ, each value with when it began.
std::string environment_cell(const RunRecord& run, const EnvironmentRow& row) {
  std::vector<std::pair<std::string, double>> history;  // a value, and the start time of the first process with it
  for (const ProcessRecord& p : run.processes) {
    std::string value = row.show(p);
    if (history.empty() || history.back().first != value) history.emplace_back(std::move(value), p.start_time);
  }
  std::string html = html_escape(history.back().first);
  if (history.size() == 1) return html;
  std::string changes;
  for (const auto& [value, since] : history) {
    changes += fmt::format("{}{} from {}", changes.empty() ? "" : ", ", html_escape(value), utc_time(since));
  }
  return html + " <span class=\"changed\">(changed between processes: " + changes + ")</span>";
}

std::string environment_section(const RunRecord& run, const ReportOptions& options) {
  std::string html = "<h2>Environment</h2>\n";
  if (run.processes.empty()) {
    html +=
        fmt::format("<p class=\"empty\" id=\"no-environment\">Not recorded: {} (this report was written by {}).</p>\n",
                    run.has_run_log ? "runs.jsonl holds no process start"
                                    : "there is no runs.jsonl (a run from a kforge that did not record it)",
                    html_escape(options.generated_by));
  } else {
    html += fmt::format("<p class=\"note\">From runs.jsonl: the latest of its {} process start(s), at {}.</p>\n",
                        run.processes.size(), utc_time(run.processes.back().start_time));
  }
  html += "<table id=\"environment\">\n";
  if (!run.processes.empty()) {
    for (const EnvironmentRow& row : environment_rows()) {
      html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", row.title, environment_cell(run, row));
    }
  }
  return html + fmt::format("<tr><th>plugins</th><td>{}</td></tr>\n</table>\n", plugin_list(run.plugins));
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
  html += events_section(run, events);
  html += config_section(run);
  html += environment_section(run, options);
  html += fmt::format("<p class=\"note\">Written by {}.</p>\n", html_escape(options.generated_by));
  html += fmt::format("<script>\n{}\n</script>\n</body>\n</html>\n", kScript);
  return html;
}

}  // namespace kforge::report
