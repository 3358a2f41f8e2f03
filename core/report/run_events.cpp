// Checkpoints, resumes and NaN skips of a run, derived from its directory (see run_events.h).
#include "report/run_events.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kforge::report {
namespace {

constexpr const char* kTrainLoss = "train/loss";
constexpr const char* kPeakRss = "memory/peak_rss_gb";

double line_value(const MetricLine& line, const char* name) {
  const auto it = line.values.find(name);
  return it == line.values.end() ? std::nan("") : it->second;
}

std::vector<const MetricLine*> train_lines(const RunRecord& run) {
  std::vector<const MetricLine*> lines;
  for (const MetricLine& line : run.lines) {
    if (line.values.count(kTrainLoss) && (lines.empty() || line.step > lines.back()->step)) lines.push_back(&line);
  }
  return lines;
}

// Seconds per step over the whole run: the median of the consecutive train lines' paces.
double median_pace(const std::vector<const MetricLine*>& lines) {
  std::vector<double> paces;
  for (size_t i = 1; i < lines.size(); ++i) {
    const double pace =
        (lines[i]->time - lines[i - 1]->time) / static_cast<double>(lines[i]->step - lines[i - 1]->step);
    if (std::isfinite(pace)) paces.push_back(pace);
  }
  if (paces.empty()) return std::nan("");
  std::nth_element(paces.begin(), paces.begin() + paces.size() / 2, paces.end());
  return paces[paces.size() / 2];
}

// The time of the last line of `step` (an eval line comes after the train line, once the eval is done).
double last_time_at(const RunRecord& run, int64_t step) {
  double t = NAN;
  for (const MetricLine& line : run.lines) {
    if (line.step == step && !(line.time <= t)) t = line.time;
  }
  return t;
}

void add_resumes(const RunRecord& run, const std::vector<const MetricLine*>& lines, std::vector<RunEvent>& events) {
  const double pace = median_pace(lines);
  for (size_t i = 1; i < lines.size(); ++i) {
    const MetricLine& a = *lines[i - 1];
    const MetricLine& b = *lines[i];
    // The last thing known done before b: a's eval, or the save of the newest checkpoint in [a, b).
    const CheckpointRecord* checkpoint = nullptr;
    for (const CheckpointRecord& c : run.checkpoints) {
      if (c.step >= a.step && c.step < b.step) checkpoint = &c;
    }
    int64_t from_step = a.step;
    double from_time = last_time_at(run, a.step);
    std::string from_what = fmt::format("step {}", a.step);
    if (checkpoint != nullptr && checkpoint->committed_at && *checkpoint->committed_at > from_time) {
      from_step = checkpoint->step, from_time = *checkpoint->committed_at;
      from_what = fmt::format("step_{} was saved", checkpoint->step);
    }
    const double gap = b.time - from_time;
    const double expected = static_cast<double>(b.step - from_step) * pace;
    const double rss_a = line_value(a, kPeakRss), rss_b = line_value(b, kPeakRss);
    std::string reason;
    if (rss_b < rss_a) {  // false when either is NaN
      reason = fmt::format("its peak RSS, {:.4f} GiB, is below step {}'s {:.4f} GiB", rss_b, a.step, rss_a);
    } else if (gap > 2 * expected + kResumeSlackSec) {
      reason = fmt::format("it was logged {:.2f} s after {}, where {} step(s) take {:.2f} s at the run's pace", gap,
                           from_what, b.step - from_step, expected);
    } else {
      continue;
    }
    const std::string from =
        checkpoint != nullptr
            ? fmt::format("from step_{}", checkpoint->step)
            : fmt::format("from a checkpoint in steps {}..{} (no longer in the directory)", a.step, b.step - 1);
    events.push_back({EventKind::Resume, checkpoint != nullptr ? checkpoint->step : a.step,
                      fmt::format("resumed {}: logged step {} comes from a new process ({})", from, b.step, reason)});
  }
}

bool is_logging_step(int64_t step, int64_t interval) { return step == 1 || step % interval == 0; }

void add_nan_skips(const RunRecord& run, const std::vector<const MetricLine*>& lines, std::vector<RunEvent>& events) {
  if (run.log_interval && *run.log_interval > 0) {
    for (size_t i = 1; i < lines.size(); ++i) {
      for (int64_t s = lines[i - 1]->step + 1; s < lines[i]->step; ++s) {
        if (!is_logging_step(s, *run.log_interval)) continue;
        events.push_back({EventKind::NanSkip, s,
                          fmt::format("step {}: a logging step with no metrics: its loss or gradient norm was not "
                                      "finite, so the optimizer step was skipped",
                                      s)});
      }
    }
  }
  std::optional<CheckpointRecord> previous;
  for (const CheckpointRecord& c : run.checkpoints) {
    if (!c.nan_total) continue;
    const int64_t before = previous ? *previous->nan_total : 0;
    if (*c.nan_total > before) {
      events.push_back(
          {EventKind::NanSkip, c.step,
           fmt::format("{} NaN skip(s) in steps {}..{} (train_state.json NaN total {} -> {})", *c.nan_total - before,
                       previous ? previous->step + 1 : 1, c.step, before, *c.nan_total)});
    }
    previous = c;
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
  const std::vector<const MetricLine*> lines = train_lines(run);
  add_resumes(run, lines, events);
  add_nan_skips(run, lines, events);
  std::stable_sort(events.begin(), events.end(), [](const RunEvent& x, const RunEvent& y) {
    return x.step != y.step ? x.step < y.step : static_cast<int>(x.kind) < static_cast<int>(y.kind);
  });
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
  }
  return "";
}

}  // namespace kforge::report
