// TraceRecorder: ops and user scopes recorded between start() and stop(), written as Chrome trace JSON.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kforge/sdk/error.h"
#include "profiling/trace_recorder.h"
#include "profiling/user_scope.h"
#include "support/test_host.h"

namespace kforge::test {
namespace {

using profiling::TraceRecorder;
using profiling::UserScope;

bool is_aten_matmul(const std::string& name) {
  return name == "aten::mm" || name == "aten::addmm" || name == "aten::matmul";
}

void forward_backward() {
  const at::Tensor x = at::randn({16, 32});
  const at::Tensor w = at::randn({8, 32}).requires_grad_();
  at::Tensor loss;
  {
    UserScope scope("forward");
    loss = at::linear(x, w).square().sum();
  }
  UserScope scope("backward");
  loss.backward();
}

nlohmann::json written(const TraceRecorder& recorder, const std::string& tag) {
  const auto path = temp_dir(tag) / "sub" / "trace.json";
  recorder.write(path);
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

TEST(TraceRecorder, WritesChromeTraceWithMatmulsInsideTheForwardScope) {
  TraceRecorder recorder;
  recorder.start();
  forward_backward();
  recorder.stop();
  const nlohmann::json trace = written(recorder, "trace_json");
  ASSERT_TRUE(trace.contains("traceEvents"));
  const auto& events = trace["traceEvents"];
  ASSERT_FALSE(events.empty());
  const nlohmann::json* forward = nullptr;
  for (const auto& e : events) {
    EXPECT_EQ(e["ph"], "X");
    EXPECT_GE(e["dur"].get<double>(), 0.0) << e.dump();
    EXPECT_GE(e["ts"].get<double>(), 0.0) << e.dump();
    EXPECT_TRUE(e.contains("pid") && e.contains("tid") && e.contains("name"));
    if (e["name"] == "forward" && e["cat"] == "user_scope") forward = &e;
  }
  ASSERT_NE(forward, nullptr) << "the forward user scope is in the trace";
  const double begin = (*forward)["ts"], end = begin + (*forward)["dur"].get<double>();
  int inside = 0;
  for (const auto& e : events) {
    if (e["cat"] != "op" || !is_aten_matmul(e["name"]) || e["tid"] != (*forward)["tid"]) continue;
    const double ts = e["ts"];
    if (ts >= begin && ts + e["dur"].get<double>() <= end) ++inside;
  }
  EXPECT_GE(inside, 1) << "an aten::mm/addmm/matmul event nests inside the forward scope";
}

TEST(TraceRecorder, RecordsNothingAfterStop) {
  TraceRecorder recorder;
  recorder.start();
  forward_backward();
  recorder.stop();
  const size_t recorded = recorder.events().size();
  ASSERT_GT(recorded, 0u);
  forward_backward();
  EXPECT_EQ(recorder.events().size(), recorded);
  EXPECT_FALSE(recorder.recording());
}

TEST(TraceRecorder, OpTotalsSumPerNameLargestSelfTimeFirstWithoutUserScopes) {
  TraceRecorder recorder;
  recorder.start();
  forward_backward();
  recorder.stop();
  const auto totals = recorder.op_totals(1000);
  ASSERT_FALSE(totals.empty());
  for (size_t i = 1; i < totals.size(); ++i) EXPECT_GE(totals[i - 1].self_ms, totals[i].self_ms);
  int64_t calls = 0;
  for (const auto& t : totals) {
    EXPECT_NE(t.name, "forward");
    EXPECT_GE(t.self_ms, 0.0) << t.name;
    EXPECT_LE(t.self_ms, t.total_ms) << t.name;
    calls += t.calls;
  }
  const auto linear =
      std::find_if(totals.begin(), totals.end(), [](const auto& t) { return t.name == "aten::linear"; });
  ASSERT_NE(linear, totals.end());
  EXPECT_LT(linear->self_ms, linear->total_ms) << "aten::linear's nested matmul is not its self time";
  int64_t ops = 0;
  for (const auto& e : recorder.events()) ops += e.user_scope ? 0 : 1;
  EXPECT_EQ(calls, ops);
  EXPECT_EQ(recorder.op_totals(2).size(), 2u);
}

TEST(TraceRecorder, OnlyOneRecorderRecordsAtATime) {
  TraceRecorder first, second;
  first.start();
  EXPECT_THROW(second.start(), sdk::Error);
  first.stop();
  second.start();
  EXPECT_TRUE(second.recording());
}

TEST(TraceRecorder, WriteToAnUnwritablePathNamesIt) {
  TraceRecorder recorder;
  const auto file = temp_dir("trace_unwritable") / "a_file";
  std::ofstream(file) << "x";
  try {
    recorder.write(file / "trace.json");
    FAIL() << "expected sdk::Error";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("trace_dir"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kforge::test
