// TraceRecorder (see trace_recorder.h).
#include "profiling/trace_recorder.h"

#include <ATen/record_function.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "kforge/sdk/error.h"

namespace kforge::profiling {
namespace {

// The recorder being filled and the recording session it belongs to, both guarded by g_lock.
std::mutex g_lock;
TraceRecorder* g_active = nullptr;
std::atomic<uint64_t> g_session{0};  ///< 0: nobody records

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

struct Begin : at::ObserverContext {
  Begin(uint64_t s, int64_t t) : session(s), begin_ns(t) {}
  uint64_t session;
  int64_t begin_ns;
};

}  // namespace

struct TraceRecorder::Callbacks {
  static std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction&) {
    const uint64_t session = g_session.load(std::memory_order_acquire);
    if (session == 0) return nullptr;
    return std::make_unique<Begin>(session, now_ns());
  }

  static void on_end(const at::RecordFunction& fn, at::ObserverContext* ctx) {
    const auto* begin = static_cast<const Begin*>(ctx);
    if (begin == nullptr) return;
    const int64_t end_ns = now_ns();
    std::lock_guard<std::mutex> lock(g_lock);
    if (g_active == nullptr || g_session.load(std::memory_order_relaxed) != begin->session) return;
    const int64_t origin = g_active->origin_ns_;
    if (begin->begin_ns < origin) return;
    g_active->events_.push_back(TraceEvent{fn.name(), fn.threadId(), fn.scope() == at::RecordScope::USER_SCOPE,
                                           begin->begin_ns - origin, end_ns - origin});
  }
};

TraceRecorder::~TraceRecorder() { stop(); }

void TraceRecorder::start() {
  std::lock_guard<std::mutex> lock(g_lock);
  if (g_active != nullptr)
    throw sdk::Error("profiling: a trace is already being recorded; stop it before starting another");
  static uint64_t sessions = 0;
  events_.clear();
  origin_ns_ = now_ns();
  g_active = this;
  g_session.store(++sessions, std::memory_order_release);
  handle_ = at::addGlobalCallback(
      at::RecordFunctionCallback(&Callbacks::on_start, &Callbacks::on_end)
          .needsInputs(false)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION, at::RecordScope::USER_SCOPE}));
}

void TraceRecorder::stop() {
  std::lock_guard<std::mutex> lock(g_lock);
  if (handle_ == 0) return;
  at::removeCallback(handle_);
  handle_ = 0;
  g_active = nullptr;
  g_session.store(0, std::memory_order_release);
}

std::vector<TraceEvent> TraceRecorder::events() const {
  std::lock_guard<std::mutex> lock(g_lock);
  return events_;
}

std::vector<OpTotal> TraceRecorder::op_totals(size_t top) const {
  std::vector<TraceEvent> events = this->events();
  // Per thread, outer events first: an event's parent is the innermost open event enclosing it.
  std::sort(events.begin(), events.end(), [](const TraceEvent& a, const TraceEvent& b) {
    if (a.thread != b.thread) return a.thread < b.thread;
    return a.begin_ns != b.begin_ns ? a.begin_ns < b.begin_ns : a.end_ns > b.end_ns;
  });
  std::vector<int64_t> self_ns(events.size());
  std::vector<size_t> open;
  for (size_t i = 0; i < events.size(); ++i) {
    const TraceEvent& e = events[i];
    while (!open.empty() && (events[open.back()].thread != e.thread || events[open.back()].end_ns <= e.begin_ns)) {
      open.pop_back();
    }
    self_ns[i] = e.end_ns - e.begin_ns;
    if (!open.empty()) self_ns[open.back()] -= self_ns[i];
    open.push_back(i);
  }
  std::map<std::string, OpTotal> by_name;
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].user_scope) continue;
    OpTotal& t = by_name[events[i].name];
    t.name = events[i].name;
    t.calls += 1;
    t.total_ms += static_cast<double>(events[i].end_ns - events[i].begin_ns) / 1e6;
    t.self_ms += static_cast<double>(self_ns[i]) / 1e6;
  }
  std::vector<OpTotal> out;
  out.reserve(by_name.size());
  for (auto& [name, total] : by_name) out.push_back(std::move(total));
  std::sort(out.begin(), out.end(), [](const OpTotal& a, const OpTotal& b) { return a.self_ms > b.self_ms; });
  if (out.size() > top) out.resize(top);
  return out;
}

void TraceRecorder::write(const std::filesystem::path& path) const {
  nlohmann::json events = nlohmann::json::array();
  const int pid = static_cast<int>(::getpid());
  for (const TraceEvent& e : this->events()) {
    events.push_back({{"name", e.name},
                      {"cat", e.user_scope ? "user_scope" : "op"},
                      {"ph", "X"},
                      {"ts", static_cast<double>(e.begin_ns) / 1e3},
                      {"dur", static_cast<double>(e.end_ns - e.begin_ns) / 1e3},
                      {"pid", pid},
                      {"tid", e.thread}});
  }
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path);
  out << nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump() << '\n';
  if (!out) {
    throw sdk::Error("profiling: cannot write the trace '" + path.string() +
                     "'; check that [profiling] trace_dir is a writable directory");
  }
}

}  // namespace kforge::profiling
