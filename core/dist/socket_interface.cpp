// Choosing the interfaces Gloo binds (see socket_interface.h).
#include "dist/socket_interface.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "kforge/sdk/error.h"

namespace kforge::dist {
namespace {

// "eth0 (10.78.0.12), lo (127.0.0.1)": what this host offers, for messages.
std::string list(const std::vector<NetInterface>& interfaces) {
  std::string out;
  for (const NetInterface& i : interfaces) out += fmt::format("{}{} ({})", out.empty() ? "" : ", ", i.name, i.address);
  return out.empty() ? "none" : out;
}

// The numeric address of `sa`; "" for a family other than IPv4 and IPv6.
std::string numeric(const sockaddr* sa) {
  char text[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, text, sizeof(text));
  } else if (sa->sa_family == AF_INET6) {
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, text, sizeof(text));
  }
  return text;
}

bool is_loopback(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) {
    return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  }
  return sa->sa_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
}

}  // namespace

std::vector<std::string> parse_socket_ifname(const std::string& value) {
  std::vector<std::string> names;
  size_t start = 0;
  while (true) {
    const size_t comma = value.find(',', start);
    std::string name = value.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty()) {
      throw sdk::ConfigError(fmt::format("GLOO_SOCKET_IFNAME='{}' has an empty interface name; list interface names "
                                         "separated by commas, e.g. GLOO_SOCKET_IFNAME=eth0 or eth0,eth1",
                                         value));
    }
    names.push_back(std::move(name));
    if (comma == std::string::npos) return names;
    start = comma + 1;
  }
}

std::vector<NetInterface> choose_interfaces(const std::optional<std::string>& ifname, const std::string& master,
                                            bool master_loopback, const std::string& route_source,
                                            const std::vector<NetInterface>& interfaces) {
  std::vector<NetInterface> chosen;
  if (ifname) {
    for (const std::string& name : parse_socket_ifname(*ifname)) {
      const auto named = [&](bool v4) {
        return std::find_if(interfaces.begin(), interfaces.end(), [&](const NetInterface& i) {
          return i.name == name && (!v4 || i.address.find(':') == std::string::npos);
        });
      };
      auto it = named(true);
      if (it == interfaces.end()) it = named(false);
      if (it == interfaces.end()) {
        throw sdk::Error(fmt::format("GLOO_SOCKET_IFNAME='{}' names interface '{}', which has no address on this "
                                     "host (up: {}); set it to the interface that reaches the other nodes",
                                     *ifname, name, list(interfaces)));
      }
      chosen.push_back(*it);
    }
  } else {
    const auto it = std::find_if(interfaces.begin(), interfaces.end(),
                                 [&](const NetInterface& i) { return i.address == route_source; });
    if (it == interfaces.end()) {
      throw sdk::Error(fmt::format("no interface of this host owns {}, the address its traffic to the master {} "
                                   "leaves from (up: {}); set GLOO_SOCKET_IFNAME to the interface that reaches the "
                                   "other nodes",
                                   route_source, master, list(interfaces)));
    }
    chosen.push_back(*it);
  }
  for (const NetInterface& i : chosen) {
    if (i.loopback && !master_loopback) {
      throw sdk::Error(fmt::format("this rank would advertise the loopback address {} (interface {}) to ranks on other "
                                   "hosts while the master {} is not on loopback: they could not reach it. Set "
                                   "GLOO_SOCKET_IFNAME to the interface that reaches the other nodes (up: {})",
                                   i.address, i.name, master, list(interfaces)));
    }
  }
  return chosen;
}

NetInterface sole_network_interface(const std::string& master, const std::vector<NetInterface>& interfaces) {
  std::vector<NetInterface> found;
  for (const bool v4 : {true, false}) {
    for (const NetInterface& i : interfaces) {
      const auto same_name = [&](const NetInterface& f) { return f.name == i.name; };
      const bool listed = std::any_of(found.begin(), found.end(), same_name);
      if (!i.loopback && !listed && (!v4 || i.address.find(':') == std::string::npos)) found.push_back(i);
    }
  }
  if (found.size() != 1) {
    throw sdk::Error(fmt::format("MASTER_ADDR '{}' resolves to loopback on this host, but ranks run on other hosts, "
                                 "and this host has {} other interfaces to listen on ({}): set GLOO_SOCKET_IFNAME to "
                                 "the one that reaches the other nodes, or MASTER_ADDR to rank 0's network address",
                                 master, found.empty() ? "no" : "several", list(found)));
  }
  return found.front();
}

std::vector<NetInterface> local_interfaces() {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) throw sdk::Error("getifaddrs failed: cannot list this host's network interfaces");
  std::vector<NetInterface> out;
  for (const ifaddrs* a = all; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || (a->ifa_flags & IFF_UP) == 0) continue;
    const std::string address = numeric(a->ifa_addr);
    if (!address.empty()) out.push_back({a->ifa_name, address, is_loopback(a->ifa_addr)});
  }
  ::freeifaddrs(all);
  return out;
}

MasterRoute route_to(const std::string& master, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* found = nullptr;
  if (const int rc = ::getaddrinfo(master.c_str(), std::to_string(port).c_str(), &hints, &found); rc != 0) {
    throw sdk::Error(fmt::format("MASTER_ADDR '{}' does not resolve on this host: {}", master, ::gai_strerror(rc)));
  }
  MasterRoute route;
  for (const addrinfo* ai = found; ai != nullptr && route.source.empty(); ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof(local);
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0) {
      route.source = numeric(reinterpret_cast<const sockaddr*>(&local));
      route.master_loopback = is_loopback(ai->ai_addr);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  if (route.source.empty()) {
    throw sdk::Error(fmt::format("no route from this host reaches MASTER_ADDR '{}'; check the address, or set "
                                 "GLOO_SOCKET_IFNAME to the interface that reaches it",
                                 master));
  }
  return route;
}

GlooBinding gloo_interfaces(const std::string& master, int port, bool single_node) {
  const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
  if (ifname != nullptr && *ifname != '\0') {
    return {choose_interfaces(std::string(ifname), master, route_to(master, port).master_loopback, "",
                              local_interfaces()),
            fmt::format("GLOO_SOCKET_IFNAME={}", ifname)};
  }
  if (single_node) return {{{"lo", "127.0.0.1", true}}, "every rank being on this host"};
  const MasterRoute route = route_to(master, port);
  in6_addr numeric_master{};
  const bool a_name = master != "localhost" && ::inet_pton(AF_INET, master.c_str(), &numeric_master) != 1 &&
                      ::inet_pton(AF_INET6, master.c_str(), &numeric_master) != 1;
  if (route.master_loopback && a_name) {
    return {{sole_network_interface(master, local_interfaces())},
            fmt::format("being this host's only network interface: MASTER_ADDR {} resolves to loopback here", master)};
  }
  return {choose_interfaces(std::nullopt, master, route.master_loopback, route.source, local_interfaces()),
          fmt::format("the route to {}", master)};
}

}  // namespace kforge::dist
