// The events of a run on its step axis, derived from what the run directory holds: checkpoints
// (the step_N directories), resumes (a new process in metrics.jsonl) and NaN skips.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "report/run_record.h"

namespace kforge::report {

enum class EventKind { Checkpoint, Resume, NanSkip };

struct RunEvent {
  EventKind kind;
  int64_t step;
  std::string text;  ///< what happened and how it was found, one sentence
};

/// A resume is marked after train line a where the next train line b comes from a new process: the
/// peak RSS drops (it never does within one process), or the wall-clock gap exceeds twice the time
/// b - a steps take at the run's median pace plus kResumeSlackSec. It sits at the newest checkpoint
/// in [a, b), else at a.
inline constexpr double kResumeSlackSec = 1.0;

/// Checkpoints, resumes and NaN skips in step order. NaN skips: a step with a non-finite loss logs
/// no metrics, so a logging step (a multiple of [metrics] log_interval) missing between logged ones
/// is one; and a rise of train_state.json's NaN total between two checkpoints counts those the
/// logging steps missed.
std::vector<RunEvent> run_events(const RunRecord& run);

/// "checkpoint", "resume", "NaN skip".
const char* event_kind_name(EventKind kind);

}  // namespace kforge::report
