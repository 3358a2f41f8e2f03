// Which network interfaces a rank's Gloo devices listen on: GLOO_SOCKET_IFNAME, else the one that routes to the master.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kforge::dist {

/// One address of one network interface of this host.
struct NetInterface {
  std::string name;     ///< "eth0"
  std::string address;  ///< numeric, "10.78.0.12" or "fe80::1"
  bool loopback = false;
};

/// GLOO_SOCKET_IFNAME's value as PyTorch reads it: interface names separated by commas, one Gloo device each.
/// Throws sdk::ConfigError naming the variable when an entry is empty.
std::vector<std::string> parse_socket_ifname(const std::string& value);

/// The interfaces to bind, one per Gloo device. `ifname` is GLOO_SOCKET_IFNAME when set; otherwise the interface that
/// owns `route_source`, the address this host sends from to reach the master. `interfaces` are this host's (an
/// interface's first IPv4 address wins over its IPv6 ones). Throws sdk::Error naming GLOO_SOCKET_IFNAME when a named
/// interface has no address here, when no interface owns `route_source`, or when a chosen interface is loopback and
/// the master is not (`master_loopback` false): the ranks on other hosts could not reach it.
std::vector<NetInterface> choose_interfaces(const std::optional<std::string>& ifname, const std::string& master,
                                            bool master_loopback, const std::string& route_source,
                                            const std::vector<NetInterface>& interfaces);

/// The one interface of this host that is up and not loopback (its IPv4 address when it has one), for a rank whose
/// MASTER_ADDR is a name that resolves to loopback here (Debian maps a host's own name to 127.0.1.1) while ranks run
/// on other hosts. Throws sdk::Error naming GLOO_SOCKET_IFNAME when there is none, or several to choose from.
NetInterface sole_network_interface(const std::string& master, const std::vector<NetInterface>& interfaces);

/// This host's interface addresses (getifaddrs), those of interfaces that are down left out.
std::vector<NetInterface> local_interfaces();

/// Where this host's traffic to the master leaves from, and whether the master is a loopback address.
struct MasterRoute {
  std::string source;
  bool master_loopback = false;
};
/// `master` resolved, a UDP socket connected to `master`:`port` (which sends nothing) and its local address read back.
/// Throws sdk::Error naming MASTER_ADDR when `master` does not resolve or no route reaches it.
MasterRoute route_to(const std::string& master, int port);

/// The interfaces this rank's Gloo devices bind, and why them (for the start-up log).
struct GlooBinding {
  std::vector<NetInterface> interfaces;
  std::string reason;  ///< "GLOO_SOCKET_IFNAME=eth0", "the route to 10.78.0.11", ...
};
/// GLOO_SOCKET_IFNAME when set; else 127.0.0.1 when every rank is on this host (`single_node`); else the interface
/// that routes to the master (see choose_interfaces), or, when the master is a name (not "localhost") that resolves to
/// loopback here, sole_network_interface.
GlooBinding gloo_interfaces(const std::string& master, int port, bool single_node);

}  // namespace kforge::dist
