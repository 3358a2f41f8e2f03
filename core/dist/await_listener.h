// Waiting for rank 0's store to listen before a client connects to it: c10d's TCPStore client sleeps a whole
// second after a refused connection, and in a local launch the ranks start together, so without this wait about
// half of all rendezvous lost that second.
#pragma once

#include <chrono>
#include <string>

namespace kforge::dist {

/// Tries a TCP connection to `host`:`port` every 10 ms until one is accepted (it is closed at once) or `timeout`
/// has passed, resolving `host` again on each try. True once one was accepted; false at the timeout.
bool await_listener(const std::string& host, int port, std::chrono::milliseconds timeout);

}  // namespace kforge::dist
