// Waiting for a TCP listener (see await_listener.h).
#include "dist/await_listener.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <thread>

namespace kforge::dist {
namespace {

using Clock = std::chrono::steady_clock;

// One connection attempt to `ai`, waiting at most `wait` for it to complete: true when it was accepted.
bool connects(const addrinfo& ai, std::chrono::milliseconds wait) {
  const int fd = ::socket(ai.ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool accepted = ::connect(fd, ai.ai_addr, ai.ai_addrlen) == 0;
  if (!accepted && errno == EINPROGRESS) {
    pollfd p{fd, POLLOUT, 0};
    int error = 0;
    socklen_t len = sizeof(error);
    accepted = ::poll(&p, 1, static_cast<int>(wait.count())) == 1 &&
               ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == 0 && error == 0;
  }
  ::close(fd);
  return accepted;
}

}  // namespace

bool await_listener(const std::string& host, int port, std::chrono::milliseconds timeout) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const auto deadline = Clock::now() + timeout;
  bool accepted = false;
  while (!accepted) {
    addrinfo* found = nullptr;  // resolved on every try: a name may not resolve yet when a job starts
    if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) == 0) {
      for (const addrinfo* ai = found; ai != nullptr && !accepted; ai = ai->ai_next) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
        accepted = connects(*ai, std::clamp(left, std::chrono::milliseconds(1), std::chrono::milliseconds(1000)));
      }
      ::freeaddrinfo(found);
    }
    const auto now = Clock::now();
    if (accepted || now >= deadline) break;
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(10), deadline - now));
  }
  return accepted;
}

}  // namespace kforge::dist
