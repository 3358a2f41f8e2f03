// FFmpeg's log, kept off stderr: messages at error level or above are collected per thread, so a VideoError can
// say why FFmpeg refused a file ("moov atom not found"); everything else is dropped.
#pragma once

#include <string>

namespace kforge::video {

/// Installs the process-wide av_log callback (once; later calls do nothing).
void route_ffmpeg_log();

/// The error messages FFmpeg logged on this thread since the last call, "; "-separated, and forgets them.
std::string take_ffmpeg_messages();

/// av_strerror's text for an FFmpeg error code.
std::string ffmpeg_error_text(int code);

}  // namespace kforge::video
