// The av_log callback: each error line formatted with av_log_format_line2, prefixed with the logging component's
// name (not its address), appended to a bounded thread-local buffer.
#include "video/ffmpeg_log.h"

extern "C" {
#include <libavutil/error.h>
#include <libavutil/log.h>
}

#include <cstdarg>
#include <mutex>

namespace kforge::video {
namespace {

constexpr size_t kMaxCollected = 2000;  // a corrupt file can log thousands of lines

thread_local std::string collected_messages;

void collect_errors(void* context, int level, const char* format, va_list arguments) {
  if (level > AV_LOG_ERROR) return;
  char line[1024];
  int print_prefix = 0;
  if (av_log_format_line2(nullptr, level, format, arguments, line, sizeof(line), &print_prefix) < 0) return;
  std::string message(line);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  if (message.empty() || collected_messages.size() >= kMaxCollected) return;
  const AVClass* av_class = context != nullptr ? *static_cast<const AVClass* const*>(context) : nullptr;
  if (av_class != nullptr && av_class->item_name != nullptr) message = av_class->item_name(context) + (": " + message);
  if (!collected_messages.empty()) collected_messages += "; ";
  collected_messages += message;
}

}  // namespace

void route_ffmpeg_log() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(collect_errors); });
}

std::string take_ffmpeg_messages() {
  std::string messages;
  messages.swap(collected_messages);
  return messages;
}

std::string ffmpeg_error_text(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  if (av_strerror(code, text, sizeof(text)) < 0) return "FFmpeg error " + std::to_string(code);
  return text;
}

}  // namespace kforge::video
