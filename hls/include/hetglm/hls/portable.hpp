// SPDX-License-Identifier: Apache-2.0
// HLS portability: HETGLM_HLS(x) places `#pragma x` for Vitis HLS (through _Pragma, UG1399) and expands to nothing
// for g++/clang/nvcc, so the kernel sources compile anywhere without unknown-pragma noise. Every pragma in hls/
// goes through this macro (scripts/check_hls_subset.py enforces it).
#ifndef HETGLM_HLS_PORTABLE_HPP
#define HETGLM_HLS_PORTABLE_HPP

#if defined(__VITIS_HLS__) || defined(__SYNTHESIS__)
#define HETGLM_HLS(x) _Pragma(#x)
#else
#define HETGLM_HLS(x)
#endif

#endif  // HETGLM_HLS_PORTABLE_HPP
