// Opening (libavformat with an interrupt callback on the deadline, only the file protocol), the decoder (libavcodec,
// `threads` threads), and the single decode pass that hands each target its frame.
#include "video/clip_decoder.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "video/ffmpeg_handles.h"
#include "video/ffmpeg_log.h"
#include "video/frame_converter.h"

namespace kforge::video {

struct ClipDecoder::State {
  std::string path;
  DecodeOptions options;
  std::chrono::steady_clock::time_point deadline;
  bool timed_out = false;
  bool decoded = false;
  FormatContextPtr format;
  CodecContextPtr codec;
  int stream_index = -1;
  double time_base = 0;  // seconds per pts unit of the video stream
  ClipDuration duration;

  std::chrono::steady_clock::time_point now() const {
    return options.clock ? options.clock() : std::chrono::steady_clock::now();
  }

  bool deadline_passed() {
    if (!timed_out && now() >= deadline) timed_out = true;
    return timed_out;
  }

  [[noreturn]] void fail(VideoError::Kind kind, const std::string& what, int code = 0) {
    std::string reason = code != 0 ? ffmpeg_error_text(code) : std::string();
    const std::string logged = take_ffmpeg_messages();
    if (!logged.empty()) reason += reason.empty() ? logged : " (" + logged + ")";
    if (timed_out || kind == VideoError::Kind::kDeadline) {
      const std::string during = kind == VideoError::Kind::kDeadline ? what : what + ": " + reason;
      throw VideoError(VideoError::Kind::kDeadline,
                       fmt::format("{}: decode deadline of {} s passed ({})", path, options.timeout_s, during));
    }
    throw VideoError(
        kind, reason.empty() ? fmt::format("{}: {}", path, what) : fmt::format("{}: {}: {}", path, what, reason));
  }

  void check_deadline(const char* what) {
    if (deadline_passed()) fail(VideoError::Kind::kDeadline, what);
  }

  void open();
  void open_decoder();
};

namespace {

void check_options(const DecodeOptions& options) {
  if (options.frame_size < 1 || options.frame_size > 16384) {
    throw std::invalid_argument(fmt::format("[video] frame_size must be in 1..16384, got {}", options.frame_size));
  }
  if (std::isnan(options.timeout_s) || options.timeout_s < 0) {
    throw std::invalid_argument(fmt::format("video decode timeout must be >= 0 seconds, got {}", options.timeout_s));
  }
  if (options.threads < 0) {
    throw std::invalid_argument(
        fmt::format("video decode threads must be >= 0 (0: FFmpeg's choice), got {}", options.threads));
  }
}

std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start, double seconds) {
  constexpr double kForever = 1e9;  // about 30 years: no deadline, and no overflow of the clock's range
  if (seconds >= kForever) return std::chrono::steady_clock::time_point::max();
  return start +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
}

}  // namespace

void ClipDecoder::State::open() {
  route_ffmpeg_log();
  take_ffmpeg_messages();  // what an earlier clip left on this thread is not this clip's
  check_deadline("before opening");
  format.reset(avformat_alloc_context());
  if (!format) throw std::bad_alloc();
  format->interrupt_callback.callback = [](void* opaque) {
    return static_cast<State*>(opaque)->deadline_passed() ? 1 : 0;
  };
  format->interrupt_callback.opaque = this;
  AVDictionary* open_options = nullptr;
  av_dict_set(&open_options, "protocol_whitelist", "file", 0);  // no network or pipes from a playlist or a reference
  AVFormatContext* raw = format.release();
  // "file:" so that a path with a colon is not read as a protocol name.
  const int opened = avformat_open_input(&raw, ("file:" + path).c_str(), nullptr, &open_options);
  av_dict_free(&open_options);
  if (opened < 0) fail(VideoError::Kind::kOpen, "cannot open", opened);  // avformat_open_input freed the context
  format.reset(raw);
  if (const int found = avformat_find_stream_info(format.get(), nullptr); found < 0) {
    fail(VideoError::Kind::kOpen, "cannot read the stream info", found);
  }
  const int best = av_find_best_stream(format.get(), AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (best < 0 || (format->streams[best]->disposition & AV_DISPOSITION_ATTACHED_PIC) != 0) {
    take_ffmpeg_messages();
    fail(VideoError::Kind::kNoVideoStream, "no video stream");
  }
  stream_index = best;
  for (unsigned i = 0; i < format->nb_streams; ++i) {
    if (static_cast<int>(i) != stream_index) format->streams[i]->discard = AVDISCARD_ALL;
  }
  const AVStream& stream = *format->streams[stream_index];
  time_base = av_q2d(stream.time_base);
  duration = clip_duration({stream.duration, stream.time_base.num, stream.time_base.den, format->duration,
                            stream.nb_frames, stream.avg_frame_rate.num, stream.avg_frame_rate.den});
  open_decoder();
  take_ffmpeg_messages();  // what the probe logged did not stop it
}

void ClipDecoder::State::open_decoder() {
  const AVStream& stream = *format->streams[stream_index];
  const AVCodecParameters& parameters = *stream.codecpar;
  const AVCodec* decoder = avcodec_find_decoder(parameters.codec_id);
  if (decoder == nullptr) {
    fail(VideoError::Kind::kDecode, fmt::format("no decoder for codec {}", avcodec_get_name(parameters.codec_id)));
  }
  const int64_t pixels = int64_t{parameters.width} * parameters.height;
  if (parameters.width < 0 || parameters.height < 0 || pixels > kMaxFramePixels) {
    fail(VideoError::Kind::kDecode, fmt::format("frames of {}x{} pixels (allowed: up to {} pixels)", parameters.width,
                                                parameters.height, kMaxFramePixels));
  }
  codec.reset(avcodec_alloc_context3(decoder));
  if (!codec) throw std::bad_alloc();
  if (const int copied = avcodec_parameters_to_context(codec.get(), &parameters); copied < 0) {
    fail(VideoError::Kind::kDecode, "cannot read the codec parameters", copied);
  }
  codec->pkt_timebase = stream.time_base;
  codec->thread_count = options.threads;
  if (const int opened = avcodec_open2(codec.get(), decoder, nullptr); opened < 0) {
    fail(VideoError::Kind::kDecode, fmt::format("cannot open the {} decoder", decoder->name), opened);
  }
}

namespace {

// The targets in increasing order (ties in their given order), and which have their frame.
class TargetQueue {
 public:
  explicit TargetQueue(const std::vector<double>& targets) : targets_(targets), order_(targets.size()) {
    std::iota(order_.begin(), order_.end(), size_t{0});
    std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return targets[a] < targets[b]; });
  }
  bool done() const { return next_ == order_.size(); }
  /// The next target (an index into the targets) a frame at `pts_s` is taken for, if any; it is then taken.
  bool take(double pts_s, size_t* target) {
    if (done() || !(pts_s >= targets_[order_[next_]] - kTimestampTolerance)) return false;
    *target = order_[next_++];
    return true;
  }
  /// The next target without a frame (the trailing ones take the last frame).
  bool take_any(size_t* target) { return take(std::numeric_limits<double>::infinity(), target); }

 private:
  const std::vector<double>& targets_;
  std::vector<size_t> order_;
  size_t next_ = 0;
};

// Writes `frame` (pts `pts_s`) for every target `take` hands out, scaling it once.
template <typename Take>
void hand_out(const AVFrame& frame, double pts_s, Take take, FrameConverter* converter, DecodedClip* clip) {
  size_t first = 0;
  size_t target = 0;
  bool scaled = false;
  while (take(&target)) {
    if (!scaled) {
      converter->convert(frame, clip->frames[static_cast<int64_t>(target)]);
      first = target;
      scaled = true;
    } else {
      clip->frames[static_cast<int64_t>(target)].copy_(clip->frames[static_cast<int64_t>(first)]);
    }
    clip->timestamps[target] = pts_s;
  }
}

}  // namespace

ClipDecoder::ClipDecoder(const std::string& path, DecodeOptions options) : state_(std::make_unique<State>()) {
  check_options(options);
  state_->path = path;
  state_->options = std::move(options);
  state_->deadline = deadline_after(state_->now(), state_->options.timeout_s);
  state_->open();
}

ClipDecoder::~ClipDecoder() = default;
ClipDecoder::ClipDecoder(ClipDecoder&&) noexcept = default;
ClipDecoder& ClipDecoder::operator=(ClipDecoder&&) noexcept = default;

const std::string& ClipDecoder::path() const { return state_->path; }
double ClipDecoder::duration_s() const { return state_->duration.seconds; }
DurationSource ClipDecoder::duration_source() const { return state_->duration.source; }

DecodedClip ClipDecoder::decode(const std::vector<double>& targets) {
  State& state = *state_;
  if (state.decoded) throw std::logic_error(state.path + ": ClipDecoder::decode called twice");
  state.decoded = true;
  if (targets.empty()) throw std::invalid_argument(state.path + ": no target timestamps to decode");
  for (const double target : targets) {
    if (!std::isfinite(target)) throw std::invalid_argument(fmt::format("{}: target timestamp {}", state.path, target));
  }
  const int64_t size = state.options.frame_size;
  DecodedClip clip{at::empty({static_cast<int64_t>(targets.size()), 3, size, size}, at::kByte),
                   std::vector<double>(targets.size())};
  TargetQueue queue(targets);
  FrameConverter converter(size, state.path);
  const PacketPtr packet(av_packet_alloc());
  const FramePtr frame(av_frame_alloc());
  const FramePtr last(av_frame_alloc());  // the latest decoded frame, for the trailing targets
  if (!packet || !frame || !last) throw std::bad_alloc();
  double last_pts_s = 0;
  bool any_frame = false;

  // Receives every frame the decoder has ready, handing each to the targets it satisfies.
  const auto receive_frames = [&] {
    while (!queue.done()) {
      const int received = avcodec_receive_frame(state.codec.get(), frame.get());
      if (received == AVERROR(EAGAIN) || received == AVERROR_EOF) return;
      if (received < 0) state.fail(VideoError::Kind::kDecode, "cannot decode a frame", received);
      const int64_t pts = frame->pts != AV_NOPTS_VALUE ? frame->pts : frame->best_effort_timestamp;
      if (pts == AV_NOPTS_VALUE) state.fail(VideoError::Kind::kDecode, "a decoded frame has no timestamp");
      av_frame_unref(last.get());
      av_frame_move_ref(last.get(), frame.get());
      last_pts_s = static_cast<double>(pts) * state.time_base;
      any_frame = true;
      hand_out(
          *last, last_pts_s, [&](size_t* target) { return queue.take(last_pts_s, target); }, &converter, &clip);
    }
  };

  bool end_of_file = false;
  while (!queue.done() && !end_of_file) {
    state.check_deadline("while decoding");
    const int read = av_read_frame(state.format.get(), packet.get());
    if (read == AVERROR_EOF) {
      end_of_file = true;
      break;
    }
    if (read < 0) state.fail(VideoError::Kind::kDecode, "cannot read a packet", read);
    if (packet->stream_index != state.stream_index) {
      av_packet_unref(packet.get());
      continue;
    }
    const int sent = avcodec_send_packet(state.codec.get(), packet.get());
    av_packet_unref(packet.get());
    if (sent < 0) state.fail(VideoError::Kind::kDecode, "cannot decode a packet", sent);
    receive_frames();
  }
  if (!queue.done()) {  // the end of the file: the frames the decoder still holds
    if (const int sent = avcodec_send_packet(state.codec.get(), nullptr); sent < 0 && sent != AVERROR_EOF) {
      state.fail(VideoError::Kind::kDecode, "cannot flush the decoder", sent);
    }
    receive_frames();
  }
  if (!any_frame) state.fail(VideoError::Kind::kNoFrames, "no frame decoded");
  hand_out(
      *last, last_pts_s, [&](size_t* target) { return queue.take_any(target); }, &converter, &clip);
  take_ffmpeg_messages();
  return clip;
}

DecodedClip decode_clip(const std::string& path, const TimestampPolicy& policy, const DecodeOptions& options) {
  ClipDecoder decoder(path, options);
  return decoder.decode(policy(decoder.duration_s()));
}

}  // namespace kforge::video
