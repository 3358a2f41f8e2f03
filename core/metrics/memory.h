// Host memory of this process, for the metric line on CPU.
#pragma once

namespace kforge::metrics {

/// Peak resident set size of this process so far, in GiB.
double peak_rss_gib();

/// Current resident set size, in GiB.
double current_rss_gib();

/// The machine's physical memory (MemTotal), in GiB.
double physical_memory_gib();

}  // namespace kforge::metrics
