// TraceRecorder: records every ATen op and user scope run between start() and stop() (through
// at::RecordFunction global callbacks) and writes them as a Chrome-trace JSON that Perfetto opens.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace kforge::profiling {

/// One finished op or scope; times in nanoseconds since start().
struct TraceEvent {
  std::string name;
  uint64_t thread = 0;  ///< at::RecordFunction::currentThreadId() of the thread that ran it
  bool user_scope = false;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

/// Time of every op event with one name: inclusive (total) and without the ops nested in it (self).
struct OpTotal {
  std::string name;
  int64_t calls = 0;
  double total_ms = 0;
  double self_ms = 0;
};

/// At most one recorder records at a time in a process (the callbacks are process-global).
/// Events that began before start() or end after stop() are not recorded.
class TraceRecorder {
 public:
  TraceRecorder() = default;
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;
  ~TraceRecorder();

  /// Clears earlier events and begins recording; throws sdk::Error if any recorder is recording.
  void start();
  /// Ends recording (no-op when not recording). After it returns no event is added.
  void stop();
  bool recording() const { return handle_ != 0; }

  /// The events recorded so far, in end order.
  std::vector<TraceEvent> events() const;
  /// Per-name totals of the op events (user scopes left out), largest self time first, at most `top`.
  std::vector<OpTotal> op_totals(size_t top) const;
  /// Writes {"traceEvents": [...]} (ph "X", ts/dur in us, pid, tid, name, cat "op" / "user_scope");
  /// creates the parent directory. Throws sdk::Error naming the path when it cannot be written.
  void write(const std::filesystem::path& path) const;

  struct Callbacks;  ///< the at::RecordFunction callbacks (trace_recorder.cpp)

 private:
  std::vector<TraceEvent> events_;  ///< guarded by the process-wide recording lock
  uint64_t handle_ = 0;             ///< at::CallbackHandle while recording
  int64_t origin_ns_ = 0;
};

}  // namespace kforge::profiling
