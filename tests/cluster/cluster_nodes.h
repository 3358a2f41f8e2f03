// Jobs on the nodes of scripts/cluster.sh for the cluster tests: bringing the nodes up, a `kforge launch` line run as
// node I of two, both nodes' launchers in one shell command, and the clock of a log line.
#pragma once

#include <string>
#include <vector>

#include "core/train/train_fixture.h"

namespace kforge::test {

/// scripts/cluster.sh in the source tree.
extern const std::string kCluster;

/// `scripts/cluster.sh up N [flag]`, failing the test when it does not come up.
void cluster_up(int nodes, const std::string& flag = "");
/// `command` (a `kforge launch` line) as node `node` of two, rendezvousing at node 1's `port`.
std::string as_node(std::string command, int node, int port);
/// The shell command that runs `fx` on both nodes, one rank each (node 2 in the background), rendezvousing at node 1
/// on a port of its own, with `env` before each launcher; `after_node1` runs once node 1's launcher has ended (e.g.
/// to continue what is stopped on node 2). Prints "node1 exited R1, node2 exited R2" and fails unless both are 0.
std::string both_nodes(const TrainFixture& fx, const std::vector<std::string>& overrides, const std::string& env,
                       const std::string& after_node1 = "");
/// The seconds since midnight of a log line's "YYYY-MM-DD HH:MM:SS.mmm" stamp that precedes `marker` in `text`; -1
/// when there is none.
double stamp_before(const std::string& text, const std::string& marker);

}  // namespace kforge::test
