// Transparent huge pages for the malloc heap of every process the front-end starts: a training step's
// large tensors then fault in 2 MiB at a time instead of 4 KiB (a kernel that gives huge pages only on
// request, THP "madvise", otherwise leaves each first touch of a tensor to 512 times as many faults).
#pragma once

#include <string>

namespace kforge::launch {

/// `tunables` (a GLIBC_TUNABLES value) with glibc.malloc.hugetlb=1 added, unless it sets
/// glibc.malloc.hugetlb already (then it is returned unchanged: the user's choice wins).
std::string with_heap_huge_pages(const std::string& tunables);

/// Sets GLIBC_TUNABLES in this process's environment to with_heap_huge_pages() of its value, for the
/// processes it execs or spawns: glibc reads it only when a process starts.
void ask_children_for_heap_huge_pages();

}  // namespace kforge::launch
