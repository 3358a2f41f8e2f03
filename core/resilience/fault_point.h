// Fault points: named places on the host's durable-write paths where the fault-injection suite
// (tests/fault) makes a process die or receive a signal at an exact moment, chosen by environment:
//
//   KFORGE_FAULT=<point>[@<n>][:<signal>]   at the n-th pass (1-based, default 1) of <point>, raise
//                                           <signal> (KILL, TERM, USR1, INT, STOP, with or without
//                                           SIG; default KILL)
//   KFORGE_FAULT_RANK=<r>                   only in the process whose RANK is r (default: every rank)
//
// Unset, a pass costs a std::call_once check. A malformed KFORGE_FAULT throws
// std::invalid_argument naming the variable and its value, at the first pass: the front-end's first statement
// (frontend.start), which reports it and exits 2.
// The points the checkpoint writer passes are listed in core/checkpoint (kFaultPoint* constants).
#pragma once

namespace kforge::resilience {

/// Marks one pass of `point` (a string literal); raises the configured signal on the chosen pass.
void fault_point(const char* point);

}  // namespace kforge::resilience
