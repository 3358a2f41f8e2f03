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
/// peak RSS drops (it never does within one process), or b comes more than kResumeSlackSec (about
/// less than a new process takes to start: loading LibTorch alone takes more) plus twice the time its steps take at the
/// run's median pace after the last thing known done before it: a's eval, or the save of the newest checkpoint in [a,
/// b) (its commit.json's modification time), whichever ended later. It sits at that checkpoint, else at a. A save whose
/// checkpoint is no longer in the directory is not known, so a slow one can be taken for a resume.
inline constexpr double kResumeSlackSec = 0.25;

/// Checkpoints, resumes and NaN skips in step order. NaN skips: a step with a non-finite loss logs
/// no metrics, so a logging step (a multiple of [metrics] log_interval) missing between logged ones
/// is one; and a rise of train_state.json's NaN total between two checkpoints counts those the
/// logging steps missed.
std::vector<RunEvent> run_events(const RunRecord& run);

/// "checkpoint", "resume", "NaN skip".
const char* event_kind_name(EventKind kind);

}  // namespace kforge::report
