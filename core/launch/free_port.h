// A free TCP port for a local launch's rendezvous, chosen outside the kernel's ephemeral range so
// that no socket of another process can take it between the check and rank 0's bind.
#pragma once

namespace kforge::launch {

/// A port below (or else above) /proc/sys/net/ipv4/ip_local_port_range that binds on every
/// address right now, tried from a random start; when there is none, one the kernel picks.
int free_local_port();

}  // namespace kforge::launch
