// TensorBoard Event encoding (see tensorboard_events.h).
#include "tensorboard_events.h"

#include "proto_wire.h"

namespace kforge::builtin::metrics {
namespace {

// Field numbers of the public TensorFlow/TensorBoard protos.
namespace event {
constexpr uint32_t wall_time = 1, step = 2, file_version = 3, summary = 5, session_log = 7;
}
namespace summary_value {
constexpr uint32_t tag = 1, simple_value = 2, tensor = 8, metadata = 9;
}
constexpr uint32_t kSummaryValue = 1;                                         // Summary.value (repeated)
constexpr uint32_t kMetadataPluginData = 1;                                   // SummaryMetadata.plugin_data
constexpr uint32_t kPluginDataName = 1;                                       // SummaryMetadata.PluginData.plugin_name
constexpr uint32_t kTensorDtype = 1, kTensorShape = 2, kTensorStringVal = 8;  // TensorProto
constexpr uint64_t kDtString = 7;                                             // DataType.DT_STRING
constexpr uint32_t kSessionLogStatus = 1;                                     // SessionLog.status
constexpr uint64_t kSessionStart = 1;                                         // SessionLog.SessionStatus.START

ProtoWriter event_header(double wall_time, int64_t step) {
  ProtoWriter e;
  e.fixed64(event::wall_time, wall_time);
  if (step != 0) e.varint(event::step, static_cast<uint64_t>(step));
  return e;
}

}  // namespace

std::string file_version_event(double wall_time) {
  return event_header(wall_time, 0).bytes(event::file_version, "brain.Event:2").str();
}

std::string scalars_event(double wall_time, int64_t step, const sdk::MetricList& metrics) {
  ProtoWriter summary;
  for (const auto& [name, value] : metrics) {
    summary.message(
        kSummaryValue,
        ProtoWriter().bytes(summary_value::tag, name).fixed32(summary_value::simple_value, static_cast<float>(value)));
  }
  return event_header(wall_time, step).message(event::summary, summary).str();
}

std::string text_event(double wall_time, int64_t step, const std::string& tag, const std::string& markdown) {
  const ProtoWriter metadata = ProtoWriter().message(kMetadataPluginData, ProtoWriter().bytes(kPluginDataName, "text"));
  const ProtoWriter tensor = ProtoWriter()
                                 .varint(kTensorDtype, kDtString)
                                 .bytes(kTensorShape, "")  // no dimensions: a scalar string
                                 .bytes(kTensorStringVal, markdown);
  const ProtoWriter value = ProtoWriter()
                                .bytes(summary_value::tag, tag)
                                .message(summary_value::tensor, tensor)
                                .message(summary_value::metadata, metadata);
  return event_header(wall_time, step).message(event::summary, ProtoWriter().message(kSummaryValue, value)).str();
}

std::string session_start_event(double wall_time, int64_t step) {
  return event_header(wall_time, step)
      .message(event::session_log, ProtoWriter().varint(kSessionLogStatus, kSessionStart))
      .str();
}

int64_t event_step(std::string_view event) {
  int64_t step = 0;
  for (const ProtoField& f : read_proto_fields(event)) {
    if (f.number == event::step && f.wire_type == 0) step = static_cast<int64_t>(f.value);
  }
  return step;
}

}  // namespace kforge::builtin::metrics
