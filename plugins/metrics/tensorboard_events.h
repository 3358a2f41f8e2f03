// TensorBoard's Event protobufs (tensorflow/core/util/event.proto, summary.proto, tensor.proto field
// numbers), encoded by hand: the file-version header, a step's scalars, a text summary, a session start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kforge/sdk/hook.h"

namespace kforge::builtin::metrics {

/// Event{wall_time, file_version: "brain.Event:2"}: the first record of every event file.
std::string file_version_event(double wall_time);

/// Event{wall_time, step, summary{value{tag, simple_value}...}}: every metric of one step, as float32.
std::string scalars_event(double wall_time, int64_t step, const sdk::MetricList& metrics);

/// Event{wall_time, step, summary{value{tag, metadata{plugin_data{plugin_name: "text"}}, tensor{DT_STRING,
/// scalar shape, string_val: markdown}}}}: what TensorBoard's Text tab shows.
std::string text_event(double wall_time, int64_t step, const std::string& tag, const std::string& markdown);

/// Event{wall_time, step, session_log{status: START}}: TensorBoard drops what it read of this step and
/// later ones from earlier files, as after a restart.
std::string session_start_event(double wall_time, int64_t step);

/// The step field of an encoded Event (0 when absent, as in the file-version header).
int64_t event_step(std::string_view event);

}  // namespace kforge::builtin::metrics
