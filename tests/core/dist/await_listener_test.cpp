// await_listener: returns as soon as a port accepts connections, and gives up at its timeout when none does.
#include "dist/await_listener.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>

namespace kforge::dist {
namespace {

using std::chrono::milliseconds;

// A TCP socket bound to a port of 127.0.0.1 the kernel picks, listening or not; closed on destruction.
struct LoopbackSocket {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  explicit LoopbackSocket(bool listening) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    port = ntohs(addr.sin_port);
    if (listening) EXPECT_EQ(::listen(fd, 4), 0);
  }
  ~LoopbackSocket() { ::close(fd); }
};

TEST(AwaitListener, AcceptsAListeningPort) {
  LoopbackSocket store(true);
  EXPECT_TRUE(await_listener("127.0.0.1", store.port, milliseconds(30000)));
  EXPECT_TRUE(await_listener("localhost", store.port, milliseconds(30000)));
}

TEST(AwaitListener, GivesUpAtTheTimeoutWhenThePortRefusesConnections) {
  LoopbackSocket reserved(false);  // bound, not listening: every connection is refused
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(await_listener("127.0.0.1", reserved.port, milliseconds(100)));
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(100));
}

}  // namespace
}  // namespace kforge::dist
