/* SPDX-License-Identifier: Apache-2.0
 * OpenCL kernels of the opencl backend (float32). The program source is glm_math.h (with glm_math_impl.h) followed
 * by this file, so every step and gap below is the one copy of the math (hetglm_*_f).
 *
 * Layout: resident coordinates are stored CSR-of-coordinates in one pool (val, idx), coordinate at working-set
 * position p occupies [start[p], start[p] + len[p]); per-position alpha, label, weight, curvature.
 * hetglm_epoch: one work-item runs the sequential epoch over the positions in `order` (the reference order of
 *   backend.hpp's epoch_order), updating its v by sigma' (a' - a) a_i: the same sequence of operations as the
 *   host reference (SDCA: Shalev-Shwartz & Zhang 2013; primal CD with the Lipschitzed prox, glm_math.h).
 * hetglm_gaps: one work-item per position, gap against the current v.
 * hetglm_compact: moves pool ranges left (dst <= src, ascending), so the pool can be defragmented on the device
 *   without copying columns over the link again.
 */
#ifdef HETGLM_TEST_BUILD_FAILURE
#error "build failure requested by -DHETGLM_TEST_BUILD_FAILURE"
#endif

#define HETGLM_FORM_DUAL 0

float hetglm_coord_u(int form, int loss, long b, int len, global const float* val, global const int* idx,
                     global const float* v, global const float* row_lab, global const float* row_wt,
                     float inv_n, float inv_ln) {
  float s = 0.0f;
  if (form == HETGLM_FORM_DUAL) {
    for (int k = 0; k < len; ++k) s += val[b + k] * v[idx[b + k]];
    return s * inv_ln;
  }
  for (int k = 0; k < len; ++k) {
    int r = idx[b + k];
    s += val[b + k] * hetglm_loss_derivative_f(loss, row_lab[r], v[r], row_wt[r]);
  }
  return s * inv_n;
}

kernel void hetglm_epoch(global const long* start, global const int* len, global const float* val,
                         global const int* idx, global float* alpha, global const float* lab,
                         global const float* wt, global const float* curv, global const float* row_lab,
                         global const float* row_wt, global float* v, global const int* order, int count,
                         int form, int loss, int pen, float lambda, float eta, float bound, float inv_n,
                         float inv_ln, float sigma, global int* status) {
  if (get_global_id(0) != 0) return;
  for (int t = 0; t < count; ++t) {
    int p = order[t];
    long b = start[p];
    int l = len[p];
    float a = alpha[p];
    float u = hetglm_coord_u(form, loss, b, l, val, idx, v, row_lab, row_wt, inv_n, inv_ln);
    float an;
    if (form == HETGLM_FORM_DUAL) {
      an = hetglm_dual_step_f(loss, lab[p], a, u, sigma * curv[p], wt[p]);
    } else {
      an = hetglm_penalty_step_f(pen, a, u, sigma * curv[p], lambda, eta, bound);
    }
    if (!isfinite(an)) status[0] = 1;
    float delta = an - a;
    if (delta == 0.0f) continue;
    alpha[p] = an;
    float sd = sigma * delta;
    for (int k = 0; k < l; ++k) v[idx[b + k]] += sd * val[b + k];
  }
}

kernel void hetglm_gaps(global const long* start, global const int* len, global const float* val,
                        global const int* idx, global const float* alpha, global const float* lab,
                        global const float* wt, global const float* row_lab, global const float* row_wt,
                        global const float* v, int count, int form, int loss, int pen, float lambda, float eta,
                        float bound, float inv_n, float inv_ln, global float* out) {
  int p = get_global_id(0);
  if (p >= count) return;
  float u = hetglm_coord_u(form, loss, start[p], len[p], val, idx, v, row_lab, row_wt, inv_n, inv_ln);
  if (form == HETGLM_FORM_DUAL) {
    out[p] = hetglm_dual_gap_f(loss, lab[p], alpha[p], u, wt[p]) * inv_n;
  } else {
    out[p] = hetglm_primal_gap_f(pen, alpha[p], u, lambda, eta, bound);
  }
}

kernel void hetglm_compact(global float* val, global int* idx, global const long* moves, int n_moves) {
  if (get_global_id(0) != 0) return;
  for (int m = 0; m < n_moves; ++m) {
    long src = moves[3 * m], dst = moves[3 * m + 1], n = moves[3 * m + 2];
    for (long k = 0; k < n; ++k) {
      val[dst + k] = val[src + k];
      idx[dst + k] = idx[src + k];
    }
  }
}
