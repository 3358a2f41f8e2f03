// Jobs on the nodes of scripts/cluster.sh (see cluster_nodes.h).
#include "cluster_nodes.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "support/launch_job.h"
#include "support/test_host.h"

namespace kforge::test {

const std::string kCluster = std::string(KFORGE_SOURCE_DIR) + "/scripts/cluster.sh";

void cluster_up(int nodes, const std::string& flag) {
  std::string output;
  ASSERT_EQ(run_command(fmt::format("{} up {} {} 2>&1", kCluster, nodes, flag), &output), 0) << output;
}

std::string as_node(std::string command, int node, int port) {
  return command.replace(
      command.find(" launch ") + 8, 0,
      fmt::format("--nnodes 2 --node-rank {} --master-addr 10.78.0.11 --master-port {} ", node - 1, port));
}

std::string both_nodes(const TrainFixture& fx, const std::vector<std::string>& overrides, const std::string& env,
                       const std::string& after_node1) {
  static int job = 0;
  const int port = 29600 + job++;
  const std::string command = launch_command(fx, 1, overrides);
  const auto on_node = [&](int node) {
    return fmt::format("{} exec {} env {} timeout 120 {}", kCluster, node, env, as_node(command, node, port));
  };
  return fmt::format("{{ {} & n2=$!; {}; r1=$?; {}; wait $n2; r2=$?; echo \"node1 exited $r1, node2 exited $r2\"; "
                     "[ $r1 = 0 ] && [ $r2 = 0 ]; }} 2>&1",
                     on_node(2), on_node(1), after_node1.empty() ? ":" : after_node1);
}

double stamp_before(const std::string& text, const std::string& marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return -1;
  const size_t line = text.rfind('\n', at) + 1;  // npos + 1 == 0 on the first line
  int h = 0, m = 0;
  double s = 0;
  if (std::sscanf(text.c_str() + line, "%*d-%*d-%*d %d:%d:%lf", &h, &m, &s) != 3) return -1;
  return h * 3600 + m * 60 + s;
}

}  // namespace kforge::test
