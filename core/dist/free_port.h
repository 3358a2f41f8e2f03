// A TCP port on 127.0.0.1 that nothing listens on right now: the default rendezvous port of a
// local launch (as torchrun picks one).
#pragma once

namespace kforge::dist {

/// Asks the kernel for an ephemeral port; 29500 (torchrun's default) if the probe socket fails.
int free_local_port();

}  // namespace kforge::dist
