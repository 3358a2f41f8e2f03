// Checkpoints, process starts and ends, and NaN skips of a run, from its record (see run_events.h).
#include "report/run_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/utc_time.h"

namespace kforge::report {
namespace {

// "on host h (pid p)" from a start line; the parts it lacks are left out.
std::string process_where(const ProcessRecord& p) {
  std::string where;
  if (p.start.value("host", nlohmann::json()).is_string()) where += " on host " + p.start["host"].get<std::string>();
  if (p.start.value("pid", nlohmann::json()).is_number_integer()) {
    where += fmt::format(" (pid {})", p.start["pid"].get<int64_t>());
  }
  return where;
}

// The last step of the metric lines logged between `from` and `to` (s since the epoch), if any.
std::optional<int64_t> last_step_logged(const RunRecord& run, double from, double to) {
  std::optional<int64_t> last;
  for (const MetricLine& line : run.lines) {
    if (line.time >= from && line.time < to && (!last || line.step > *last)) last = line.step;
  }
  return last;
}

void add_process_events(const RunRecord& run, std::vector<RunEvent>& events) {
  static const std::map<std::string, EventKind> kEnds = {{"stopped", EventKind::Stop},
                                                         {"killed", EventKind::Kill},
                                                         {"failed", EventKind::Failure},
                                                         {"too_many_nans", EventKind::TooManyNans}};
  for (size_t i = 0; i < run.processes.size(); ++i) {
    const ProcessRecord& p = run.processes[i];
    const std::string started = fmt::format("the process started at {}{}", utc_time(p.start_time), process_where(p));
    if (p.resumed_from) {
      events.push_back(
          {EventKind::Resume, *p.resumed_from,
           fmt::format("resumed from step_{}: {} (runs.jsonl line {})", *p.resumed_from, started, p.line)});
    }
    if (p.end_time) {
      if (const auto kind = kEnds.find(p.outcome); kind != kEnds.end()) {
        events.push_back(
            {kind->second, p.end_step,
             fmt::format("{} ended \"{}\" at step {} at {}", started, p.outcome, p.end_step, utc_time(*p.end_time))});
      }
    } else if (i + 1 < run.processes.size()) {
      const ProcessRecord& next = run.processes[i + 1];
      const std::optional<int64_t> last = last_step_logged(run, p.start_time, next.start_time);
      events.push_back(
          {EventKind::Crash, last.value_or(p.start_step),
           fmt::format("{} wrote no end before the next started at {}: it crashed {}", started,
                       utc_time(next.start_time),
                       last ? fmt::format("after logging step {}", *last)
                            : fmt::format("before logging a step (it started at step {})", p.start_step))});
    }
  }
}

void add_nan_skips(const RunRecord& run, std::vector<RunEvent>& events) {
  for (const MetricLine& line : run.lines) {
    if (!line.values.count(kNanSkippedMetric)) continue;
    const auto total = line.values.find(kNanTotalMetric);
    events.push_back(
        {EventKind::NanSkip, line.step,
         fmt::format("step {}: the loss or gradient norm was not finite, so the optimizer step was "
                     "skipped{}",
                     line.step, total != line.values.end() ? fmt::format(" ({:g} so far)", total->second) : "")});
  }
}

}  // namespace

std::vector<RunEvent> run_events(const RunRecord& run) {
  std::vector<RunEvent> events;
  for (const CheckpointRecord& c : run.checkpoints) {
    events.push_back({EventKind::Checkpoint, c.step,
                      c.tokens_seen ? fmt::format("checkpoint step_{} ({} tokens seen)", c.step, *c.tokens_seen)
                                    : fmt::format("checkpoint step_{}", c.step)});
  }
  add_process_events(run, events);
  add_nan_skips(run, events);
  std::stable_sort(events.begin(), events.end(), [](const RunEvent& x, const RunEvent& y) { return x.step < y.step; });
  return events;
}

const char* event_kind_name(EventKind kind) {
  switch (kind) {
    case EventKind::Checkpoint:
      return "checkpoint";
    case EventKind::Resume:
      return "resume";
    case EventKind::NanSkip:
      return "NaN skip";
    case EventKind::Stop:
      return "stopped";
    case EventKind::Kill:
      return "killed";
    case EventKind::Failure:
      return "failed";
    case EventKind::TooManyNans:
      return "too many NaNs";
    case EventKind::Crash:
      return "crashed";
  }
  return "";
}

}  // namespace kforge::report
