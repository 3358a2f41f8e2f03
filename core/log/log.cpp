// The host logger and the plugin logger adapter (see log.h).
#include "log/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kforge::log {
namespace {
// Sets the "YYYY-MM-DD HH:MM:SS.mmm [rank R] LEVEL message" pattern (local time) and the level
// from KFORGE_LOG_LEVEL.
void configure(spdlog::logger& logger, int rank) {
  // On a terminal, first erase the training status line (metrics/status_line.h) so it never
  // garbles a log line.
  const std::string erase = ::isatty(STDERR_FILENO) ? "\r\033[K" : "";
  logger.set_pattern(erase + "%Y-%m-%d %H:%M:%S.%e [rank " + std::to_string(rank) + "] %^%l%$ %v");
  const char* level = std::getenv("KFORGE_LOG_LEVEL");
  logger.set_level(level != nullptr ? spdlog::level::from_str(level) : spdlog::level::info);
  logger.flush_on(spdlog::level::info);
}
}  // namespace

// One logger for the process, created on first use (thread-safe static initialisation: ranks run
// as threads in tests) and never replaced, so a reference from get() stays valid; init() only
// reconfigures it, which spdlog's _mt sinks and atomic level make safe under concurrent logging.
spdlog::logger& get() {
  static spdlog::logger logger = [] {
    spdlog::logger l("kforge", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    configure(l, 0);
    return l;
  }();
  return logger;
}

void init(int rank) { configure(get(), rank); }

PluginLogger::PluginLogger(std::string component) : prefix_("[" + std::move(component) + "] ") {}
void PluginLogger::debug(std::string_view m) { get().debug("{}{}", prefix_, m); }
void PluginLogger::info(std::string_view m) { get().info("{}{}", prefix_, m); }
void PluginLogger::warn(std::string_view m) { get().warn("{}{}", prefix_, m); }
void PluginLogger::error(std::string_view m) { get().error("{}{}", prefix_, m); }

}  // namespace kforge::log
