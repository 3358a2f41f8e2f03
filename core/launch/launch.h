// `kforge launch`: starts N local workers of one job and supervises them (see launch.cpp). kforge-host runs it;
// each worker is a fork of the launcher that runs `kforge <worker command>` through `worker_main`.
#pragma once

#include <cxxopts.hpp>

namespace kforge::launch {

/// The host's main: what a forked worker runs with its command line (argv[0] the kforge front-end); its exit code.
using WorkerMain = int (*)(int argc, char** argv);

/// `kforge launch`'s option table (the CLI reference is written from it too).
cxxopts::Options launch_options();

/// `kforge launch` with its arguments (argv[0] is "launch"); the launcher's exit code.
int run_launch(int argc, char** argv, WorkerMain worker_main);

}  // namespace kforge::launch
