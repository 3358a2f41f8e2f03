// The clips and the CLI reference: ffmpeg writes rawvideo rgb24 through `-vf scale=S:S:flags=bilinear` with the
// frame rate passed through (no frame dropped or duplicated), ffprobe lists the same frames' pts.
#include "video_fixtures.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "support/read_file.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

const char* const kFfmpeg = "ffmpeg -nostdin -hide_banner -loglevel error -y ";
const char* const kTestsrc = "-f lavfi -i testsrc=size=96x72:rate=10:duration=2 ";

std::string shell_quoted(const std::string& path) { return "'" + path + "'"; }

// Runs a command; its output (stdout and stderr) when it succeeds, std::runtime_error when it fails.
std::string checked(const std::string& command) {
  std::string output;
  if (run_command(command, &output) != 0) {
    throw std::runtime_error("`" + command +
                             "` failed (the video tests need the ffmpeg CLI: apt-get install ffmpeg):\n" + output);
  }
  return output;
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Deletes the clips when the test process ends.
struct ClipDirectory {
  VideoClips clips;
  ~ClipDirectory() {
    std::error_code ignored;
    if (!clips.dir.empty()) std::filesystem::remove_all(clips.dir, ignored);
  }
};

VideoClips make_clips() {
  VideoClips c;
  c.dir = temp_dir("video").string();
  const auto at = [&](const char* name) { return c.dir + "/" + name; };
  c.h264_mp4 = at("h264.mp4");
  checked(kFfmpeg + std::string(kTestsrc) + "-c:v libx264 -pix_fmt yuv420p " + shell_quoted(c.h264_mp4));
  c.vp9_webm = at("vp9.webm");
  checked(kFfmpeg + std::string(kTestsrc) + "-c:v libvpx-vp9 -pix_fmt yuv420p -b:v 300k " + shell_quoted(c.vp9_webm));
  c.bt709_mp4 = at("bt709.mp4");
  checked(kFfmpeg + std::string(kTestsrc) +
          "-c:v libx264 -pix_fmt yuv420p -colorspace bt709 -color_primaries bt709 -color_trc bt709 " +
          shell_quoted(c.bt709_mp4));
  c.full_range_mp4 = at("full_range.mp4");
  checked(kFfmpeg + std::string(kTestsrc) + "-c:v libx264 -pix_fmt yuv420p -color_range pc " +
          shell_quoted(c.full_range_mp4));
  c.ffv1_mkv = at("ffv1.mkv");
  checked(kFfmpeg + std::string(kTestsrc) + "-c:v ffv1 -pix_fmt yuv420p " + shell_quoted(c.ffv1_mkv));
  c.vfr_mkv = at("vfr.mkv");
  checked(kFfmpeg + std::string(kTestsrc) +
          "-vf \"settb=1/1000,setpts='if(lt(N,5),N*100,500+(N-5)*300)'\" -vsync passthrough -c:v ffv1 "
          "-pix_fmt yuv420p " +
          shell_quoted(c.vfr_mkv));
  c.empty_mp4 = at("empty.mp4");
  checked(kFfmpeg + std::string("-i ") + shell_quoted(c.h264_mp4) + " -c copy -frames:v 0 -movflags empty_moov " +
          shell_quoted(c.empty_mp4));
  c.header_only_y4m = at("header_only.y4m");
  write_bytes(c.header_only_y4m, "YUV4MPEG2 W96 H72 F10:1 Ip A1:1 C420jpeg\n");

  const std::string h264 = read_file(c.h264_mp4);
  c.truncated_mp4 = at("truncated.mp4");
  write_bytes(c.truncated_mp4, h264.substr(0, h264.size() / 2));
  const std::string faststart = at("faststart.mp4");
  checked(kFfmpeg + std::string(kTestsrc) + "-c:v libx264 -pix_fmt yuv420p -movflags +faststart " +
          shell_quoted(faststart));
  const std::string faststart_bytes = read_file(faststart);
  c.truncated_faststart_mp4 = at("truncated_faststart.mp4");
  write_bytes(c.truncated_faststart_mp4, faststart_bytes.substr(0, faststart_bytes.size() * 3 / 5));

  c.audio_wav = at("audio.wav");
  checked(kFfmpeg + std::string("-f lavfi -i sine=frequency=440:duration=0.5 ") + shell_quoted(c.audio_wav));
  c.text_file = at("notes.txt");
  write_bytes(c.text_file, "not a video, just some text\n");
  c.missing = at("missing.mp4");
  return c;
}

// "1/10240" -> 1.0 / 10240.
double parse_rational(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) throw std::runtime_error("not a rational: " + text);
  return std::stod(text.substr(0, slash)) / std::stod(text.substr(slash + 1));
}

}  // namespace

const VideoClips& video_clips() {
  static const ClipDirectory directory{make_clips()};
  return directory.clips;
}

void write_testsrc_clip(const std::string& path, int seconds) {
  checked(kFfmpeg + std::string("-f lavfi -i testsrc=size=96x72:rate=10:duration=") + std::to_string(seconds) +
          " -c:v libx264 -pix_fmt yuv420p " + shell_quoted(path));
}

CliFrames cli_frames(const std::string& clip, int64_t size) {
  const std::string probe = "ffprobe -v error -select_streams v:0 -of csv=p=0 ";
  const double time_base = parse_rational(checked(probe + "-show_entries stream=time_base " + shell_quoted(clip)));
  CliFrames frames;
  std::istringstream pts_lines(checked(probe + "-show_entries frame=pts " + shell_quoted(clip)));
  for (std::string line; std::getline(pts_lines, line);) {
    if (!line.empty()) frames.pts_s.push_back(static_cast<double>(std::stoll(line)) * time_base);
  }
  const std::string raw = video_clips().dir + "/cli_frames.rgb";
  checked(kFfmpeg + std::string("-i ") + shell_quoted(clip) + " -map 0:v:0 -vf scale=" + std::to_string(size) + ":" +
          std::to_string(size) + ":flags=bilinear -vsync passthrough -f rawvideo -pix_fmt rgb24 " + shell_quoted(raw));
  const std::string bytes = read_file(raw);
  const auto frame_bytes = static_cast<size_t>(size * size * 3);
  if (bytes.size() != frames.pts_s.size() * frame_bytes) {
    throw std::runtime_error("the ffmpeg CLI wrote " + std::to_string(bytes.size()) + " bytes for " +
                             std::to_string(frames.pts_s.size()) + " frames of " + clip);
  }
  frames.rgb = at::empty({static_cast<int64_t>(frames.pts_s.size()), size, size, 3}, at::kByte);
  std::copy(bytes.begin(), bytes.end(), reinterpret_cast<char*>(frames.rgb.data_ptr<uint8_t>()));
  return frames;
}

size_t cli_pick(const std::vector<double>& pts_s, double target) {
  for (size_t i = 0; i < pts_s.size(); ++i) {
    if (pts_s[i] >= target - 1e-3) return i;
  }
  return pts_s.size() - 1;
}

int max_channel_difference(const at::Tensor& decoded_chw, const at::Tensor& cli_hwc) {
  return (decoded_chw.to(at::kInt) - cli_hwc.permute({2, 0, 1}).to(at::kInt)).abs().max().item<int>();
}

}  // namespace kforge::test
