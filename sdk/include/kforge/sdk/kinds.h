// The eight component kinds, as the strings used in plugin metadata and the CLI.
#pragma once

namespace kforge::sdk::kind {

inline constexpr const char* optimizer = "optimizer";
inline constexpr const char* scheduler = "scheduler";
inline constexpr const char* router = "router";
inline constexpr const char* loss = "loss";
inline constexpr const char* model = "model";
inline constexpr const char* dataset = "dataset";
inline constexpr const char* hook = "hook";
inline constexpr const char* metric_backend = "metric_backend";

}  // namespace kforge::sdk::kind
