// UserScope: a named span (e.g. a step phase: "forward", "backward", "optimizer") that a
// TraceRecorder records as a user scope around the ops run inside it. Near-free when not recording.
#pragma once

#include <ATen/record_function.h>

namespace kforge::profiling {

class UserScope {
 public:
  /// `name` must outlive the scope (a string literal).
  explicit UserScope(const char* name);
  UserScope(const UserScope&) = delete;
  UserScope& operator=(const UserScope&) = delete;

 private:
  at::RecordFunction record_;  ///< its destructor runs the end callbacks
};

}  // namespace kforge::profiling
