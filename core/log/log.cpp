#include "log/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace kforge::log {
namespace {
std::shared_ptr<spdlog::logger>& instance() {
  static std::shared_ptr<spdlog::logger> logger;
  return logger;
}
}  // namespace

void init(int rank) {
  auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("kforge", sink);
  // On a terminal, first erase the training status line (metrics/status_line.h) so it never
  // garbles a log line.
  const std::string erase = ::isatty(STDERR_FILENO) ? "\r\033[K" : "";
  logger->set_pattern(erase + "[rank " + std::to_string(rank) + "] %^%l%$ %v");
  const char* level = std::getenv("KFORGE_LOG_LEVEL");
  logger->set_level(level != nullptr ? spdlog::level::from_str(level) : spdlog::level::info);
  logger->flush_on(spdlog::level::info);
  instance() = logger;
}

spdlog::logger& get() {
  if (!instance()) init(0);
  return *instance();
}

PluginLogger::PluginLogger(std::string component) : prefix_("[" + std::move(component) + "] ") {}
void PluginLogger::debug(std::string_view m) { get().debug("{}{}", prefix_, m); }
void PluginLogger::info(std::string_view m) { get().info("{}{}", prefix_, m); }
void PluginLogger::warn(std::string_view m) { get().warn("{}{}", prefix_, m); }
void PluginLogger::error(std::string_view m) { get().error("{}{}", prefix_, m); }

}  // namespace kforge::log
