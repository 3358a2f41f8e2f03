// Stand-in for the header a CUDA LibTorch's CMake generates (Debian's CPU LibTorch ships c10/cuda without it), so
// scripts/cuda_check.py can compile kforge's CUDA code against these headers: c10_cuda is a shared library.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
