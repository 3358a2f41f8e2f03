// The CLI's exit codes (cmdline/process_exit_codes.h, which the LibTorch-free launcher shares) by their kforge::cli
// names.
#pragma once

#include "cmdline/process_exit_codes.h"

namespace kforge::cli {

using cmdline::kExitFailure;
using cmdline::kExitOk;
using cmdline::kExitPreempted;
using cmdline::kExitUsage;

}  // namespace kforge::cli
