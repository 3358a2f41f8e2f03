// Endpoints: where this rank's Gloo devices listen and where every rank's do, exchanged at the rendezvous so that a
// failure can name the peer (rank, host, address) it could not reach.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "dist/socket_interface.h"

namespace kforge::dist {

/// One rank's endpoint as every rank sees it.
struct Peer {
  int rank = 0;
  std::string host;       ///< its hostname
  std::string interface;  ///< its Gloo devices' interfaces, "eth0" or "eth0,eth1"
  std::string address;    ///< the first device's address, the one Gloo's messages show
  int pid = 0;            ///< its process id on its host
};

/// "rank 1 on host node2 (10.78.0.12, eth0)".
std::string describe(const Peer& peer);

struct Endpoints {
  std::vector<NetInterface> bound;                 ///< this rank's Gloo devices, one per interface
  std::shared_ptr<const std::vector<Peer>> peers;  ///< every rank's endpoint, in rank order
};

/// Every rank's endpoint, in rank order: publishes `mine` under the store's "kforge/endpoint/<rank>" and waits at most
/// `timeout` for the other `world_size - 1`. Throws sdk::Error naming the ranks that never arrived, or, when the store
/// itself fails, that its host (`master`, rank 0's) is unreachable.
std::vector<Peer> exchange_endpoints(c10d::Store& store, const Peer& mine, int world_size, const std::string& master,
                                     std::chrono::milliseconds timeout);

/// Throws sdk::Error naming GLOO_SOCKET_IFNAME and the rank when some rank listens on loopback while another rank is on
/// another host or listens elsewhere: that rank's peers could not connect to it. Every rank finds the same one.
void check_no_loopback_across_hosts(const std::vector<Peer>& peers);

/// The ranks other than `self` whose address an error message shows (Gloo writes "[10.78.0.12]:41234"), described;
/// "" when it shows none. Ranks sharing a host share its address: they are all named.
std::string peers_named_in(const std::string& error, const std::vector<Peer>& peers, int self);

}  // namespace kforge::dist
