// SPDX-License-Identifier: Apache-2.0
// THE kernel ABI of the FPGA kernel: kernel name, argument order, buffer packing, fixed maximum sizes and the status
// words. The kernel (hls/) defines it; the host runtime (fpga/) includes it (fpga depends on hls, never the reverse).
// Nothing else in the tree knows these (docs/design.md, "The FPGA path: kernel, ABI, host runtime").
// HLS subset: C++14, no STL, no heap (scripts/check_hls_subset.py checks this file too).
//
// One kernel, `hetglm_scd_epoch`, with formulation, loss and penalty ids as scalar arguments (not one kernel per
// loss): one xclbin serves all six models, so DuHL switches models (and one-vs-rest classes) without reprogramming
// the card, and the host has exactly one kernel name to check. The price is area for the four loss branches of the
// coordinate step, small next to the column-streaming datapath (the step runs once per column, the datapath once
// per nonzero).
//
// Buffer packing (all little-endian 32-bit words, one buffer per memory port):
//   col_val  float[capacity]    nonzero values of the resident columns (a pool; a column is a contiguous range)
//   col_idx  int32[capacity]    their indices into the shared vector v (0 <= idx < dim, distinct within a column)
//   col_ptr  int32[2*ws]        per working-set position p: {offset into the pool, number of nonzeros}
//   coord    float[4*ws]        per position: {label y_i, weight c_i, curvature q_i (dual) or H_j (primal), 0}
//   alpha    float[ws]          in/out: the coordinates' values (dual alpha_i, primal w_j), working-set order
//   v        float[dim]         in/out: the shared vector v = A alpha (the device's own copy)
//   row      float[2*dim]       primal only: {y_k, c_k} per entry of v (dual: ignored, at least 2 words)
//   order    int32[epochs*ws]   the visiting order: pass e visits positions order[e*ws + t], t = 0..ws-1
//                               (epoch_order() of backend.hpp, computed by the host; the kernel has no RNG)
//   status   int32[4]           out: {updates, non-finite steps, error code, 0}
// Scalars: ws, dim, epochs, formulation (HETGLM_FORM_* of glm_math.h: 0 dual, 1 primal), loss (HETGLM_LOSS_*),
//   penalty (HETGLM_PENALTY_*), scale (dual 1/(lambda n), primal 1/n), sigma (CoCoA+ sigma'), lambda, eta, bound.
#ifndef HETGLM_HLS_KERNEL_ABI_HPP
#define HETGLM_HLS_KERNEL_ABI_HPP

namespace hetglm {
namespace hls {
namespace abi {

/// The kernel (top function) name, in the xclbin and in C simulation.
#define HETGLM_FPGA_KERNEL_NAME "hetglm_scd_epoch"

/// Fixed maximum sizes (compile-time; on chip): the shared vector v (and the column buffer) and alpha.
/// 64Ki floats of v = 256 KiB, 128Ki floats of alpha = 512 KiB: BRAM/URAM on an Alveo U250/U280.
/// v tiling for larger dims is a later step (docs/fpga.md).
const int kMaxDim = 65536;
const int kMaxCoords = 131072;
/// Partial sums of the pipelined inner product: at least the float adder latency, so the loop reaches II = 1.
const int kPartials = 8;

/// Words per entry of the per-coordinate and per-row arrays.
const int kCoordWords = 4;
const int kRowWords = 2;
const int kColPtrWords = 2;
const int kStatusWords = 4;

/// Argument positions (xrt::kernel::group_id and xrt::run::set_arg use these).
enum Arg {
  kArgColVal = 0,
  kArgColIdx,
  kArgColPtr,
  kArgCoord,
  kArgAlpha,
  kArgV,
  kArgRow,
  kArgOrder,
  kArgStatus,
  kArgWs,
  kArgDim,
  kArgEpochs,
  kArgFormulation,
  kArgLoss,
  kArgPenalty,
  kArgScale,
  kArgSigma,
  kArgLambda,
  kArgEta,
  kArgBound,
  kNumArgs
};
const int kNumBufferArgs = kArgWs;  ///< arguments 0..8 are buffers, 9.. scalars

/// status[] words.
enum StatusWord { kStatusUpdates = 0, kStatusNonFinite = 1, kStatusError = 2 };
/// status[kStatusError] codes: the kernel refused the call (and changed nothing).
enum ErrorCode { kErrNone = 0, kErrDimTooLarge = 1, kErrTooManyCoords = 2, kErrBadArgument = 3 };

/// The scalar arguments, in ABI order.
struct Scalars {
  int ws;
  int dim;
  int epochs;
  int formulation;
  int loss;
  int penalty;
  float scale;
  float sigma;
  float lambda;
  float eta;
  float bound;
};

}  // namespace abi
}  // namespace hls
}  // namespace hetglm

#endif  // HETGLM_HLS_KERNEL_ABI_HPP
