// SPDX-License-Identifier: Apache-2.0
// The extern "C" top function of the FPGA kernel (kernel_abi.hpp): one kernel for every model, with formulation,
// loss and penalty ids as scalar arguments (kernel_abi.hpp says why). Synthesized by v++ (hls/Makefile) and, as
// plain C++, linked into the simulated device (fpga/src/sim_device.cpp) and the C-simulation test.
#include "hetglm/hls/kernel_abi.hpp"
#include "hetglm/hls/portable.hpp"
#include "hetglm/hls/scd_epoch.hpp"

extern "C" void hetglm_scd_epoch(const float* col_val, const int* col_idx, const int* col_ptr, const float* coord,
                                 float* alpha, float* v, const float* row, const int* order, int* status, int ws,
                                 int dim, int epochs, int formulation, int loss, int penalty, float scale,
                                 float sigma, float lambda, float eta, float bound) {
  // Memory ports: columns on their own bundles so values and indices stream in parallel (kernel_abi.hpp packing;
  // hls/cfg/u250.cfg maps the bundles to DDR banks).
  HETGLM_HLS(HLS INTERFACE m_axi port=col_val offset=slave bundle=gmem0 max_read_burst_length=256)
  HETGLM_HLS(HLS INTERFACE m_axi port=col_idx offset=slave bundle=gmem1 max_read_burst_length=256)
  HETGLM_HLS(HLS INTERFACE m_axi port=col_ptr offset=slave bundle=gmem2)
  HETGLM_HLS(HLS INTERFACE m_axi port=coord offset=slave bundle=gmem2)
  HETGLM_HLS(HLS INTERFACE m_axi port=alpha offset=slave bundle=gmem3)
  HETGLM_HLS(HLS INTERFACE m_axi port=v offset=slave bundle=gmem3)
  HETGLM_HLS(HLS INTERFACE m_axi port=row offset=slave bundle=gmem3)
  HETGLM_HLS(HLS INTERFACE m_axi port=order offset=slave bundle=gmem2)
  HETGLM_HLS(HLS INTERFACE m_axi port=status offset=slave bundle=gmem2)
  HETGLM_HLS(HLS INTERFACE s_axilite port=ws)
  HETGLM_HLS(HLS INTERFACE s_axilite port=dim)
  HETGLM_HLS(HLS INTERFACE s_axilite port=epochs)
  HETGLM_HLS(HLS INTERFACE s_axilite port=formulation)
  HETGLM_HLS(HLS INTERFACE s_axilite port=loss)
  HETGLM_HLS(HLS INTERFACE s_axilite port=penalty)
  HETGLM_HLS(HLS INTERFACE s_axilite port=scale)
  HETGLM_HLS(HLS INTERFACE s_axilite port=sigma)
  HETGLM_HLS(HLS INTERFACE s_axilite port=lambda)
  HETGLM_HLS(HLS INTERFACE s_axilite port=eta)
  HETGLM_HLS(HLS INTERFACE s_axilite port=bound)
  HETGLM_HLS(HLS INTERFACE s_axilite port=return)
  // On-chip memories (BRAM/URAM). Static: they are the kernel's fixed RAMs, and in C simulation they stay off the
  // caller's stack; the simulated device serializes calls (one compute unit), as the card does.
  static hetglm::hls::OnChip<hetglm::hls::abi::kMaxDim, hetglm::hls::abi::kMaxCoords> m;
  HETGLM_HLS(HLS BIND_STORAGE variable=m.alpha type=ram_2p impl=uram)
  hetglm::hls::scd_epochs<hetglm::hls::abi::kMaxDim, hetglm::hls::abi::kMaxCoords, hetglm::hls::abi::kPartials>(
      col_val, col_idx, col_ptr, coord, alpha, v, row, order, status, ws, dim, epochs, formulation, loss, penalty,
      scale, sigma, lambda, eta, bound, m);
}
