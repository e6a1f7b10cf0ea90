/* SPDX-License-Identifier: Apache-2.0
 * OpenCL kernels of the opencl backend (float32). The program source is glm_math.h (with glm_math_impl.h) followed
 * by this file, so every step and gap below is glm_math.h's coordinate kernel (hetglm_coordinate_step_f,
 * hetglm_coordinate_gap_f), the one copy of the math.
 *
 * Layout: resident coordinates are stored CSR-of-coordinates in one pool (val, idx), placed by the host's
 * ColumnPool (core/include/hetglm/column_pool.hpp); the coordinate at working-set position p occupies
 * [start[p], start[p] + len[p]); per-position alpha, label, weight, curvature. The objective arrives as the
 * arguments of hetglm_objective_make_f (formulation, loss, penalty, lambda, eta, bound, 1/n, 1/(lambda n)).
 * hetglm_epoch: one work-item runs the sequential epoch over the positions in `order` (the reference order of
 *   backend.hpp's epoch_order), updating its v by sigma' (a' - a) a_i: the same sequence of operations as the
 *   host reference (SDCA: Shalev-Shwartz & Zhang 2013; primal CD with the Lipschitzed prox, glm_math.h).
 * hetglm_gaps: one work-item per position, gap against the current v.
 */
#ifdef HETGLM_TEST_BUILD_FAILURE
#error "build failure requested by -DHETGLM_TEST_BUILD_FAILURE"
#endif

/* The raw inner product r of position p's column with v (glm_math.h hetglm_shared_factor_f). */
float hetglm_coord_r(hetglm_objective_f o, long b, int len, global const float* val, global const int* idx,
                     global const float* v, global const float* row_lab, global const float* row_wt) {
  float s = 0.0f;
  if (o.formulation == HETGLM_FORM_DUAL) {
    for (int k = 0; k < len; ++k) s += val[b + k] * v[idx[b + k]];
    return s;
  }
  for (int k = 0; k < len; ++k) {
    int r = idx[b + k];
    s += val[b + k] * hetglm_shared_factor_f(o, v[r], row_lab[r], row_wt[r]);
  }
  return s;
}

kernel void hetglm_epoch(global const long* start, global const int* len, global const float* val,
                         global const int* idx, global float* alpha, global const float* lab,
                         global const float* wt, global const float* curv, global const float* row_lab,
                         global const float* row_wt, global float* v, global const int* order, int count,
                         int form, int loss, int pen, float lambda, float eta, float bound, float inv_n,
                         float inv_ln, float sigma, global int* status) {
  if (get_global_id(0) != 0) return;
  hetglm_objective_f o = hetglm_objective_make_f(form, loss, pen, lambda, eta, bound, inv_n, inv_ln);
  for (int t = 0; t < count; ++t) {
    int p = order[t];
    long b = start[p];
    int l = len[p];
    float a = alpha[p];
    float r = hetglm_coord_r(o, b, l, val, idx, v, row_lab, row_wt);
    float an = hetglm_coordinate_step_f(o, a, r, curv[p], lab[p], wt[p], sigma);
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
  hetglm_objective_f o = hetglm_objective_make_f(form, loss, pen, lambda, eta, bound, inv_n, inv_ln);
  float r = hetglm_coord_r(o, start[p], len[p], val, idx, v, row_lab, row_wt);
  out[p] = hetglm_coordinate_gap_f(o, alpha[p], r, lab[p], wt[p]);
}
