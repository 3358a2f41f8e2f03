#include "dist/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <vector>

namespace kforge::dist {
namespace {

// True when a socket can bind `port` on the wildcard address (what the store's server binds).
bool bindable(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

}  // namespace

int free_local_port() {
  // The kernel hands out ports of this range to bind(0) and connect(): the Gloo pairs of other
  // jobs on this host could take a port of it at any moment. Ports outside it are only taken on
  // purpose, so one that is free now is still free when rank 0 binds it.
  int low = 32768, high = 60999;
  std::ifstream("/proc/sys/net/ipv4/ip_local_port_range") >> low >> high;
  std::vector<int> candidates;
  for (int p = 20000; p < low && p < 65536; ++p) candidates.push_back(p);
  for (int p = high + 1; p < 65536; ++p) candidates.push_back(p);
  if (candidates.empty()) return 29500;
  std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
  std::random_device seed;
  const size_t start = pick(seed);
  for (size_t i = 0; i < candidates.size() && i < 1000; ++i) {
    const int port = candidates[(start + i) % candidates.size()];
    if (bindable(port)) return port;
  }
  return 29500;
}

}  // namespace kforge::dist
