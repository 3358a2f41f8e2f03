// The ranks' endpoints (issue 55): the rendezvous names the ranks that never came, a rank listening on loopback with
// peers on other hosts is an error naming GLOO_SOCKET_IFNAME, and a failure's message names the peer it lost.
#include "dist/endpoints.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

const std::vector<Peer> kTwoNodes = {{0, "node1", "eth0", "10.78.0.11"},
                                     {1, "node2", "eth0", "10.78.0.12"},
                                     {2, "node2", "eth0", "10.78.0.12"}};

TEST(Endpoints, TheRendezvousReturnsEveryRanksEndpointInRankOrder) {
  c10d::HashStore store;
  store.set("kforge/endpoint/1", std::vector<uint8_t>{'n', '2', '\n', 'e', '\n', '1', '.', '2'});
  const std::vector<Peer> peers =
      exchange_endpoints(store, {0, "n1", "eth0", "1.1"}, 2, "n1", std::chrono::milliseconds(1000));
  ASSERT_EQ(peers.size(), 2u);
  EXPECT_EQ(describe(peers[0]), "rank 0 on host n1 (1.1, eth0)");
  EXPECT_EQ(describe(peers[1]), "rank 1 on host n2 (1.2, e)");
}

TEST(Endpoints, ARendezvousMissingRanksEndsAtItsTimeoutNamingThem) {
  c10d::HashStore store;
  const auto start = std::chrono::steady_clock::now();
  try {
    exchange_endpoints(store, {1, "node2", "eth0", "10.78.0.12"}, 3, "10.78.0.11", std::chrono::milliseconds(200));
    ADD_FAILURE() << "no error";
  } catch (const sdk::Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1: rank(s) 0, 2 of 3 did not reach the rendezvous at 10.78.0.11"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // the timeout, not a hang
}

TEST(Endpoints, LoopbackWithPeersOnOtherHostsIsAnErrorNamingTheRankAndTheVariable) {
  EXPECT_NO_THROW(check_no_loopback_across_hosts(kTwoNodes));
  EXPECT_NO_THROW(check_no_loopback_across_hosts({{0, "vm", "lo", "127.0.0.1"}, {1, "vm", "lo", "127.0.0.1"}}));
  try {
    check_no_loopback_across_hosts({{0, "node1", "lo", "127.0.1.1"}, {1, "node2", "eth0", "10.78.0.12"}});
    ADD_FAILURE() << "no error";
  } catch (const sdk::Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("rank 0 on host node1 (127.0.1.1, lo) listens on loopback, which rank 1 on host node2"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("Set GLOO_SOCKET_IFNAME"), std::string::npos) << m;
  }
}

TEST(Endpoints, AnErrorNamesThePeersWhoseAddressItShows) {
  EXPECT_EQ(peers_named_in("Connection closed by peer [10.78.0.11]:40123", kTwoNodes, 1),
            "rank 0 on host node1 (10.78.0.11, eth0)");
  // Two ranks on that host share its address; the rank reading the error is never named.
  EXPECT_EQ(peers_named_in("Read error [10.78.0.12]:5555: Connection reset by peer", kTwoNodes, 0),
            "rank 1 on host node2 (10.78.0.12, eth0) or rank 2 on host node2 (10.78.0.12, eth0)");
  EXPECT_EQ(peers_named_in("Read error [10.78.0.12]:5555", kTwoNodes, 1), "rank 2 on host node2 (10.78.0.12, eth0)");
  EXPECT_EQ(peers_named_in("Timed out waiting 30000ms for recv operation to complete", kTwoNodes, 0), "");
  EXPECT_EQ(peers_named_in("[10.78.0.1]:80", kTwoNodes, 0), "");  // a prefix of 10.78.0.11 is another address
}

}  // namespace
}  // namespace kforge::dist
