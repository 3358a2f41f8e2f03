// The run log, <metrics.run_dir>/runs.jsonl: rank 0 appends one line when a training process starts
// and one when it ends, so what ran, where each process started and how it stopped (a start with no
// end: it crashed) can be read back, e.g. by `kforge report`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace kforge::train {

/// {"event": "start", "time", "step" (where training continues), "resumed_from" (the checkpoint's
/// step, or null), "world_size", "kforge", "libtorch", "host", "pid", "environment" (CPU, ISA, BLAS,
/// threads), "plugins"}.
nlohmann::json run_start_event(int64_t step, int64_t resumed_from, int world_size, const nlohmann::json& plugins);

/// {"event": "end", "time", "step", "outcome"}: outcome is "finished", "stopped" (a hook),
/// "killed" (a signal; exit 75), "failed" (an error) or "too_many_nans".
nlohmann::json run_end_event(int64_t step, const std::string& outcome);

/// Appends `event` as one line to run_dir/runs.jsonl (creating both), flushed. Throws sdk::Error
/// naming the file when it cannot be written.
void append_run_event(const std::filesystem::path& run_dir, const nlohmann::json& event);

}  // namespace kforge::train
