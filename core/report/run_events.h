// The events of a run on its step axis, from what the run directory records: checkpoints (the
// step_N directories), process starts and ends (runs.jsonl) and NaN skips (metrics.jsonl).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/run_record.h"

namespace kforge::report {

enum class EventKind { Checkpoint, Resume, NanSkip, Stop, Kill, Failure, TooManyNans, Crash };

struct RunEvent {
  EventKind kind;
  int64_t step;
  std::string text;  ///< what happened and where it is recorded, one sentence
};

/// The metrics a non-finite step logs at its step instead of train/loss: events, not series.
inline constexpr const char* kNanSkippedMetric = "train/nan_skipped";
inline constexpr const char* kNanTotalMetric = "train/nan_total";

/// In step order: checkpoints; resumes (a start in runs.jsonl with resumed_from, at that step); ends
/// other than "finished" (at their step); crashes (a start with no end before the next start, at the
/// last step that process logged, else its start step); NaN skips (metrics lines with
/// train/nan_skipped). Without runs.jsonl there are no resumes, ends or crashes.
std::vector<RunEvent> run_events(const RunRecord& run);

/// "checkpoint", "resume", "NaN skip", "stopped", "killed", "failed", "too many NaNs", "crashed".
const char* event_kind_name(EventKind kind);

}  // namespace kforge::report
