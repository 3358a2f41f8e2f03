// The run report: one self-contained HTML page (inline SVG charts, inline CSS and a few lines of
// script for the log-scale switch; nothing fetched) built from a run directory's record.
#pragma once

#include <string>

#include "report/run_record.h"

namespace kforge::report {

struct ReportOptions {
  bool log_y = false;        ///< the loss charts open in log scale
  std::string generated_by;  ///< "kforge 0.1.0": the program writing the page
};

/// The page: a summary, the charts (loss, eval loss and per-source loss with a log-scale switch; learning
/// rate; grad norm; tokens/s; MFU; memory; step time; any other metrics by prefix) with checkpoints,
/// resumes, process ends and NaN skips marked on the step axis, the table of those events, the resolved
/// config, the environment runs.jsonl records and what the directory does not record. Without metric
/// lines it says "No metrics yet".
std::string render_report(const RunRecord& run, const ReportOptions& options);

}  // namespace kforge::report
