// `kforge launch`: starts N local workers of one job and supervises them (see launch.cpp). The front-end runs it
// without loading LibTorch; each worker is `kforge <worker command>`.
#pragma once

namespace kforge::launch {

/// `kforge launch` with its arguments (argv[0] is "launch"); the launcher's exit code.
int run_launch(int argc, char** argv);

}  // namespace kforge::launch
