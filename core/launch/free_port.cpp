// A free TCP port for a local launch's rendezvous (see free_port.h).
#include "launch/free_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <vector>

namespace kforge::launch {
namespace {

// Binds a probe socket to `address`:`port` (0: the kernel picks) and closes it: the port bound, or
// -1 when the bind fails.
int probe_bind(uint32_t address, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(address);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof(addr);
  int bound = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    bound = ntohs(addr.sin_port);
  }
  ::close(fd);
  return bound;
}

// A port the kernel picks from its ephemeral range; 29500 (torchrun's default) if the probe fails.
int ephemeral_port() {
  const int port = probe_bind(INADDR_LOOPBACK, 0);
  return port > 0 ? port : 29500;
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
  if (candidates.empty()) return ephemeral_port();  // the range covers every port: the kernel's choice
  std::uniform_int_distribution<size_t> pick(0, candidates.size() - 1);
  std::random_device seed;
  const size_t start = pick(seed);
  for (size_t i = 0; i < candidates.size() && i < 1000; ++i) {
    const int port = candidates[(start + i) % candidates.size()];
    if (probe_bind(INADDR_ANY, port) == port) return port;  // free on every address, as the store binds
  }
  return ephemeral_port();
}

}  // namespace kforge::launch
