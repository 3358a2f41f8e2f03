// Fault points selected by KFORGE_FAULT / KFORGE_FAULT_RANK (see fault_point.h).
#include "resilience/fault_point.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>

namespace kforge::resilience {
namespace {

struct FaultPlan {
  bool armed = false;
  std::string point;
  long pass = 1;
  int signal = SIGKILL;
};

int signal_named(std::string name) {
  if (name.rfind("SIG", 0) == 0) name.erase(0, 3);  // SIGTERM as well as TERM
  if (name == "KILL") return SIGKILL;
  if (name == "TERM") return SIGTERM;
  if (name == "USR1") return SIGUSR1;
  if (name == "INT") return SIGINT;
  if (name == "STOP") return SIGSTOP;
  return 0;
}

FaultPlan parse_plan() {
  FaultPlan plan;
  const char* spec = std::getenv("KFORGE_FAULT");
  if (spec == nullptr || *spec == '\0') return plan;
  if (const char* only = std::getenv("KFORGE_FAULT_RANK")) {
    const char* rank = std::getenv("RANK");
    if (std::string(rank ? rank : "0") != only) return plan;
  }
  std::string text = spec;
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("KFORGE_FAULT=\"" + text + "\": " + why +
                                 " (expected <point>[@<n>][:KILL|TERM|USR1|INT|STOP], e.g. train.step_end@3:TERM)");
  };
  if (auto colon = text.find(':'); colon != std::string::npos) {
    plan.signal = signal_named(text.substr(colon + 1));
    if (plan.signal == 0) throw bad("unknown signal \"" + text.substr(colon + 1) + "\"");
    text.resize(colon);
  }
  if (auto at = text.find('@'); at != std::string::npos) {
    const std::string count = text.substr(at + 1);
    char* end = nullptr;
    plan.pass = std::strtol(count.c_str(), &end, 10);
    if (count.empty() || *end != '\0' || plan.pass < 1) throw bad("pass \"" + count + "\" is not a positive integer");
    text.resize(at);
  }
  if (text.empty()) throw bad("no point named");
  plan.point = text;
  plan.armed = true;
  return plan;
}

std::once_flag g_parsed;
FaultPlan g_plan;
std::atomic<long> g_passes{0};

}  // namespace

void fault_point(const char* point) {
  std::call_once(g_parsed, [] { g_plan = parse_plan(); });
  if (!g_plan.armed || g_plan.point != point) return;
  if (g_passes.fetch_add(1) + 1 == g_plan.pass) std::raise(g_plan.signal);
}

}  // namespace kforge::resilience
