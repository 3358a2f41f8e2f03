// Host logging: spdlog with a rank prefix, and the sdk::Logger adapter handed to plugins.
#pragma once

#include <spdlog/logger.h>

#include <memory>
#include <string_view>

#include "kforge/sdk/logger.h"

namespace kforge::log {

/// Configures the "kforge" logger: "2026-12-01 16:40:00.123 [rank R] LEVEL message" (local time,
/// milliseconds), the level coloured on a terminal.
/// Level from KFORGE_LOG_LEVEL (trace|debug|info|warn|error), default info.
void init(int rank);

/// The host logger; before init() it logs as rank 0. Safe to call from several threads.
spdlog::logger& get();

/// sdk::Logger that forwards to the host logger, prefixing messages with the component name.
class PluginLogger final : public sdk::Logger {
 public:
  explicit PluginLogger(std::string component);
  void debug(std::string_view message) override;
  void info(std::string_view message) override;
  void warn(std::string_view message) override;
  void error(std::string_view message) override;

 private:
  std::string prefix_;
};

}  // namespace kforge::log
