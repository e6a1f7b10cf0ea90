// SPDX-License-Identifier: Apache-2.0
// Declaration of the kernel's top function (hls/src/scd_epoch_top.cpp) for C++ callers: the simulated device and
// the C-simulation test. Argument order: kernel_abi.hpp.
#ifndef HETGLM_HLS_SCD_EPOCH_TOP_HPP
#define HETGLM_HLS_SCD_EPOCH_TOP_HPP

extern "C" void hetglm_scd_epoch(const float* col_val, const int* col_idx, const int* col_ptr, const float* coord,
                                 float* alpha, float* v, const float* row, const int* order, int* status, int ws,
                                 int dim, int epochs, int formulation, int loss, int penalty, float scale,
                                 float sigma, float lambda, float eta, float bound);

#endif  // HETGLM_HLS_SCD_EPOCH_TOP_HPP
