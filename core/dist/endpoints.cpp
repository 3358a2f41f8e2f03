// Exchanging and checking the ranks' endpoints (see endpoints.h).
#include "dist/endpoints.h"

#include <fmt/format.h>

#include <sstream>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

std::string key(int rank) { return fmt::format("kforge/endpoint/{}", rank); }

bool is_loopback(const std::string& address) { return address.rfind("127.", 0) == 0 || address == "::1"; }

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out;
  for (const int r : ranks) out += fmt::format("{}{}", out.empty() ? "" : ", ", r);
  return out;
}

}  // namespace

std::string describe(const Peer& peer) {
  return fmt::format("rank {} on host {} ({}, {})", peer.rank, peer.host, peer.address, peer.interface);
}

std::vector<Peer> exchange_endpoints(c10d::Store& store, const Peer& mine, int world_size, const std::string& master,
                                     std::chrono::milliseconds timeout) {
  const std::string text = fmt::format("{}\n{}\n{}\n{}", mine.host, mine.interface, mine.address, mine.pid);
  std::vector<std::string> keys;
  for (int r = 0; r < world_size; ++r) keys.push_back(key(r));
  try {
    store.set(key(mine.rank), std::vector<uint8_t>(text.begin(), text.end()));
    store.wait(keys, timeout);
  } catch (const std::exception& e) {
    std::vector<int> missing;
    try {
      for (int r = 0; r < world_size; ++r) {
        if (!store.check({key(r)})) missing.push_back(r);
      }
    } catch (const std::exception&) {
      throw sdk::Error(fmt::format("rank {}: the rendezvous store on rank 0's host {} stopped answering ({}): rank 0 "
                                   "died or its host is unreachable from {}",
                                   mine.rank, master, e.what(), mine.host));
    }
    throw sdk::Error(fmt::format("rank {}: rank(s) {} of {} did not reach the rendezvous at {} within {} s "
                                 "(distributed.nccl_timeout_sec): were they started, with the same MASTER_ADDR and "
                                 "MASTER_PORT, and can their hosts reach {}? ({})",
                                 mine.rank, ranks_text(missing), world_size, master, timeout.count() / 1000, master,
                                 e.what()));
  }
  std::vector<Peer> peers;
  for (int r = 0; r < world_size; ++r) {
    const std::vector<uint8_t> bytes = store.get(key(r));
    std::istringstream in(std::string(bytes.begin(), bytes.end()));
    Peer peer{r, "", "", "", 0};
    std::getline(in, peer.host);
    std::getline(in, peer.interface);
    std::getline(in, peer.address);
    in >> peer.pid;
    peers.push_back(std::move(peer));
  }
  return peers;
}

void check_no_loopback_across_hosts(const std::vector<Peer>& peers) {
  for (const Peer& p : peers) {
    if (!is_loopback(p.address)) continue;
    for (const Peer& q : peers) {
      if (q.host == p.host && is_loopback(q.address)) continue;
      throw sdk::Error(fmt::format(
          "{} listens on loopback, which {} cannot reach: its hostname or MASTER_ADDR resolves to loopback there. "
          "Set GLOO_SOCKET_IFNAME to the interface that reaches the other nodes (e.g. GLOO_SOCKET_IFNAME=eth0), or "
          "MASTER_ADDR to rank 0's network address",
          describe(p), describe(q)));
    }
  }
}

std::string peers_named_in(const std::string& error, const std::vector<Peer>& peers, int self) {
  std::string out;
  for (const Peer& p : peers) {
    if (p.rank == self || error.find("[" + p.address + "]") == std::string::npos) continue;
    out += (out.empty() ? "" : " or ") + describe(p);
  }
  return out;
}

}  // namespace kforge::dist
