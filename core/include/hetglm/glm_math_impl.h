/* SPDX-License-Identifier: Apache-2.0
 * glm_math_impl.h: body of glm_math.h, included once per precision with HETGLM_REAL / HETGLM_SFX set.
 * No include guard on purpose. Do not include directly: include glm_math.h. Formulas: glm_math.h and
 * docs/math.md.
 *
 * Layout: helpers; one block of five functions per loss (value, derivative, curvature, conjugate, dual step) and of
 * three per penalty (value, conjugate, proximal step); the dispatchers generated from the tables of glm_math.h
 * (an id that is not in the table gives NaN, never another loss's value); the coordinate kernel.
 */
#define R HETGLM_REAL
#define N(name) HETGLM_CAT(name, HETGLM_SFX)

/* softplus from l = log1p(exp(-|t|)), and softplus and sigmoid from e = exp(-|t|), which a caller needing both
 * computes once (hetglm_loss_terms; a caller evaluating many samples computes e and l in vectorized loops). */
HETGLM_FN R N(hetglm_softplus_l)(R t, R l) { return t > (R)0 ? t + l : l; }
HETGLM_FN R N(hetglm_softplus_e)(R t, R e) { return N(hetglm_softplus_l)(t, (R)log1p(e)); }
HETGLM_FN R N(hetglm_sigmoid_e)(R t, R e) { return t >= (R)0 ? (R)1 / ((R)1 + e) : e / ((R)1 + e); }

/* log(1 + exp(t)) without overflow. */
HETGLM_FN R N(hetglm_softplus)(R t) { return N(hetglm_softplus_e)(t, (R)exp(t > (R)0 ? -t : t)); }

/* 1 / (1 + exp(-t)) without overflow. */
HETGLM_FN R N(hetglm_sigmoid)(R t) { return N(hetglm_sigmoid_e)(t, (R)exp(t >= (R)0 ? -t : t)); }

/* x log x with 0 log 0 = 0. */
HETGLM_FN R N(hetglm_xlogx)(R x) { return x > (R)0 ? x * (R)log(x) : (R)0; }

HETGLM_FN R N(hetglm_clamp)(R x, R lo, R hi) { return x < lo ? lo : (x > hi ? hi : x); }

HETGLM_FN R N(hetglm_soft_threshold)(R x, R tau) {
  return x > tau ? x - tau : (x < -tau ? x + tau : (R)0);
}

/* ============================================================== losses phi(z) = c l(y, z)
 * Per loss: value phi(z); derivative phi'(z) (a subgradient for hinge); curvature phi''(z) (generalized for squared
 * hinge, 0 for hinge); conjugate phi^*(-a) (+INFINITY outside the dual domain; with b = y a the domains are hinge
 * and logistic b in [0, c], squared hinge b >= 0, squared a in R); dual step: the a' maximizing
 * -phi^*(-a') - z (a' - a) - q/2 (a' - a)^2 for the margin z = x_i.w and q = sigma' ||x_i||^2 / (lambda n) >= 0. */

/* squared: l = 1/2 (z - y)^2;  phi^*(-a) = a^2/(2c) - a y;  a' = a + (y - z - a/c) / (q + 1/c). */
HETGLM_FN R N(hetglm_squared_value)(R y, R z, R c) {
  R m = z - y;
  return c * (R)0.5 * m * m;
}
HETGLM_FN R N(hetglm_squared_derivative)(R y, R z, R c) { return c * (z - y); }
HETGLM_FN R N(hetglm_squared_curvature)(R y, R z, R c) {
  (void)y;
  (void)z;
  return c;
}
HETGLM_FN R N(hetglm_squared_conjugate)(R y, R a, R c) { return a * a / ((R)2 * c) - a * y; }
HETGLM_FN R N(hetglm_squared_dual_step)(R y, R a, R z, R q, R c) { return a + (y - z - a / c) / (q + (R)1 / c); }

/* logistic: l = log(1 + exp(-y z)), y in {-1, +1};  phi^*(-a) = c (t log t + (1-t) log(1-t)), t = b/c in [0, 1].
 * Dual step: t' = b'/c solves log((1-t)/t) - y z - q c (t - b/c) = 0; solved for s = logit(t) by Newton safeguarded
 * with a bisection bracket (the residual's slope lies in [-1 - q c / 4, -1], well conditioned even when t is near
 * 0 or 1; LIBLINEAR -s 7 solves the same one-dimensional problem: Yu, Huang, Lin, Machine Learning 85, 2011). */
HETGLM_FN R N(hetglm_logistic_value)(R y, R z, R c) { return c * N(hetglm_softplus)(-y * z); }
HETGLM_FN R N(hetglm_logistic_derivative)(R y, R z, R c) { return -c * y * N(hetglm_sigmoid)(-y * z); }
HETGLM_FN R N(hetglm_logistic_curvature)(R y, R z, R c) {
  R p = N(hetglm_sigmoid)(y * z);
  return c * p * ((R)1 - p);
}
HETGLM_FN R N(hetglm_logistic_conjugate)(R y, R a, R c) {
  R b = y * a, t;
  if (b < (R)0 || b > c) return (R)INFINITY;
  t = b / c;
  return c * (N(hetglm_xlogx)(t) + N(hetglm_xlogx)((R)1 - t));
}
HETGLM_FN R N(hetglm_logistic_dual_step)(R y, R a, R z, R q, R c) {
  R b = y * a, m = y * z;
  R t0 = N(hetglm_clamp)(b / c, (R)0, (R)1);
  R kappa = q * c;
  /* residual psi(s) = -s - m - kappa (sigmoid(s) - t0), decreasing; root in [lo, hi]. */
  R lo = -m - kappa * ((R)1 - t0), hi = -m + kappa * t0;
  R s = N(hetglm_clamp)(-m, lo, hi);
  int it;
  for (it = 0; it < HETGLM_NEWTON_MAXIT; ++it) {
    R p = N(hetglm_sigmoid)(s);
    R psi = -s - m - kappa * (p - t0);
    if (psi > (R)0) {
      lo = s;
    } else {
      hi = s;
    }
    if (fabs(psi) <= HETGLM_NEWTON_TOL * ((R)1 + fabs(s))) break;
    R dpsi = -(R)1 - kappa * p * ((R)1 - p);
    R sn = s - psi / dpsi;
    if (!(sn > lo && sn < hi)) sn = (R)0.5 * (lo + hi);
    s = sn;
  }
  return y * c * N(hetglm_sigmoid)(s);
}

/* hinge: l = max(0, 1 - y z);  phi^*(-a) = -b, b in [0, c];
 * b' = clip(b + (1 - y z) / q, 0, c) (SDCA paper, Sec. 5.1; LIBLINEAR -s 3). */
HETGLM_FN R N(hetglm_hinge_value)(R y, R z, R c) {
  R m = (R)1 - y * z;
  return m > (R)0 ? c * m : (R)0;
}
HETGLM_FN R N(hetglm_hinge_derivative)(R y, R z, R c) { return y * z < (R)1 ? -c * y : (R)0; }
HETGLM_FN R N(hetglm_hinge_curvature)(R y, R z, R c) {
  (void)y;
  (void)z;
  (void)c;
  return (R)0;
}
HETGLM_FN R N(hetglm_hinge_conjugate)(R y, R a, R c) {
  R b = y * a;
  if (b < (R)0 || b > c) return (R)INFINITY;
  return -b;
}
/* The dual objective's derivative in b = y a (LIBLINEAR's G; Hsieh et al., ICML 2008, eq. 6 scaled by 1/C): y z - 1,
 * the margin's slack. The step is b - G/q, clipped; the coordinate-descent solvers' shrinking reads G itself. */
HETGLM_FN R N(hetglm_hinge_dual_gradient)(R y, R a, R z, R c) {
  (void)a;
  (void)c;
  return y * z - (R)1;
}
HETGLM_FN R N(hetglm_hinge_dual_step)(R y, R a, R z, R q, R c) {
  R b = y * a, g = N(hetglm_hinge_dual_gradient)(y, a, z, c), bn;
  if (q > (R)0) {
    bn = N(hetglm_clamp)(b - g / q, (R)0, c);
  } else {
    bn = g < (R)0 ? c : (R)0;
  }
  return y * bn;
}

/* squared hinge (LIBLINEAR -s 1): l = max(0, 1 - y z)^2;  phi^*(-a) = -b + b^2/(4c), b >= 0;
 * b' = max(0, b + (1 - y z - b/(2c)) / (q + 1/(2c))) (LIBLINEAR's D_ii = 1/(2C)). */
HETGLM_FN R N(hetglm_squared_hinge_value)(R y, R z, R c) {
  R m = (R)1 - y * z;
  return m > (R)0 ? c * m * m : (R)0;
}
HETGLM_FN R N(hetglm_squared_hinge_derivative)(R y, R z, R c) {
  R m = (R)1 - y * z;
  return m > (R)0 ? (R)-2 * c * y * m : (R)0;
}
HETGLM_FN R N(hetglm_squared_hinge_curvature)(R y, R z, R c) { return y * z < (R)1 ? (R)2 * c : (R)0; }
HETGLM_FN R N(hetglm_squared_hinge_conjugate)(R y, R a, R c) {
  R b = y * a;
  if (b < (R)0) return (R)INFINITY;
  return -b + b * b / ((R)4 * c);
}
/* The dual objective's derivative in b = y a (LIBLINEAR's G with D_ii = 1/(2C), scaled by 1/C): y z - 1 + b/(2c). */
HETGLM_FN R N(hetglm_squared_hinge_dual_gradient)(R y, R a, R z, R c) {
  return y * z - (R)1 + y * a / ((R)2 * c);
}
HETGLM_FN R N(hetglm_squared_hinge_dual_step)(R y, R a, R z, R q, R c) {
  R b = y * a, bn;
  bn = b - N(hetglm_squared_hinge_dual_gradient)(y, a, z, c) / (q + (R)1 / ((R)2 * c));
  return y * (bn > (R)0 ? bn : (R)0);
}

/* Huber (robust regression, threshold 1): l = r^2/2 for |r| <= 1, |r| - 1/2 beyond, r = z - y;
 * phi^*(-a) = a^2/(2c) - a y on |a| <= c (+INFINITY outside); a' = clip(a + (y - z - a/c) / (q + 1/c), -c, c)
 * (the squared loss's step, clipped to the dual domain: exact, the objective is quadratic there). */
HETGLM_FN R N(hetglm_huber_value)(R y, R z, R c) {
  R r = z - y, m = (R)fabs(r);
  return m <= (R)1 ? c * (R)0.5 * r * r : c * (m - (R)0.5);
}
HETGLM_FN R N(hetglm_huber_derivative)(R y, R z, R c) { return c * N(hetglm_clamp)(z - y, (R)-1, (R)1); }
HETGLM_FN R N(hetglm_huber_curvature)(R y, R z, R c) { return (R)fabs(z - y) < (R)1 ? c : (R)0; }
HETGLM_FN R N(hetglm_huber_conjugate)(R y, R a, R c) {
  if (a < -c || a > c) return (R)INFINITY;
  return a * a / ((R)2 * c) - a * y;
}
HETGLM_FN R N(hetglm_huber_dual_step)(R y, R a, R z, R q, R c) {
  return N(hetglm_clamp)(a + (y - z - a / c) / (q + (R)1 / c), -c, c);
}

/* ============================================================== the softmax (multinomial) loss, a vector loss
 * Not a row of the loss table: its margin is a vector z = x_i W in R^K (K classes, label y in 0..K-1), so it has no
 * scalar coordinate kernel; the multinomial solver (solvers/src/multinomial.cpp) calls these functions.
 *   phi(z)     = c (logsumexp(z) - z_y)                         value; p = softmax(z)
 *   grad phi   = c (p - e_y)                                    Hessian c (diag(p) - p p^T), eigenvalues <= c/2
 *   phi^*(-a)  = c sum_k q_k log q_k,  q = e_y - a / c          when q is in the simplex (the negative entropy),
 *                +INFINITY outside
 *   Fenchel-Young: phi(z) + phi^*(-a) + a.z >= 0, with equality iff a = -grad phi(z) = c (e_y - p).
 * The simplex test allows rounding: q_k >= -tol and |sum q - 1| <= tol with tol = K HETGLM_NEWTON_TOL. */
HETGLM_FN R N(hetglm_softmax_value)(const R* z, int K, int y, R c, R* p) {
  R top = z[0], sum = (R)0;
  int k;
  for (k = 1; k < K; ++k) top = z[k] > top ? z[k] : top;
  for (k = 0; k < K; ++k) {
    R e = (R)exp(z[k] - top);
    if (p) p[k] = e;
    sum += e;
  }
  if (p)
    for (k = 0; k < K; ++k) p[k] /= sum;
  return c * (top + (R)log(sum) - z[y]);
}
HETGLM_FN R N(hetglm_softmax_conjugate)(const R* a, int K, int y, R c) {
  R tol = (R)K * HETGLM_NEWTON_TOL, sum = (R)0, value = (R)0;
  int k;
  for (k = 0; k < K; ++k) {
    R q = (k == y ? (R)1 : (R)0) - a[k] / c;
    if (q < -tol) return (R)INFINITY;
    sum += q;
    value += N(hetglm_xlogx)(q);
  }
  if (fabs(sum - (R)1) > tol) return (R)INFINITY;
  return c * value;
}

/* ============================================================== penalties g(w) = lambda r(w)
 * Per penalty: value g(w) (eta = the elastic-net l1 ratio, ignored otherwise); conjugate g^*(s) (even in s; the L1
 * part Lipschitzed with the bound B); proximal step argmin_w' s (w' - w) + h/2 (w' - w)^2 + g(w') from x = h w - s,
 * clipped to |w'| <= B when the L1 part is Lipschitzed. */

/* l2: r = w^2/2;  g^*(s) = s^2/(2 lambda);  w' = x / (h + lambda). */
HETGLM_FN R N(hetglm_l2_value)(R w, R lambda, R eta) {
  (void)eta;
  return lambda * (R)0.5 * w * w;
}
HETGLM_FN R N(hetglm_l2_conjugate)(R s, R lambda, R eta, R bound) {
  (void)eta;
  (void)bound;
  return s * s / ((R)2 * lambda);
}
HETGLM_FN R N(hetglm_l2_step)(R x, R h, R lambda, R eta, R bound) {
  (void)eta;
  (void)bound;
  return x / (h + lambda);
}

/* l1: r = |w|;  g^*(s) = B max(0, |s| - lambda);  w' = clip(S_lambda(x) / h, -B, B). */
HETGLM_FN R N(hetglm_l1_value)(R w, R lambda, R eta) {
  (void)eta;
  return lambda * (R)fabs(w);
}
HETGLM_FN R N(hetglm_l1_conjugate)(R s, R lambda, R eta, R bound) {
  R e = (R)fabs(s) - lambda;
  (void)eta;
  return e > (R)0 ? bound * e : (R)0;
}
HETGLM_FN R N(hetglm_l1_step)(R x, R h, R lambda, R eta, R bound) {
  R r = N(hetglm_soft_threshold)(x, lambda) / h;
  (void)eta;
  return N(hetglm_clamp)(r, -bound, bound);
}

/* elastic net: r = eta |w| + (1 - eta) w^2/2;  g^*(s) = max(0, |s| - lambda eta)^2 / (2 lambda (1 - eta)) for
 * eta < 1 (exact: strongly convex, no bound needed), B max(0, |s| - lambda) at eta = 1;
 * w' = S_{lambda eta}(x) / (h + lambda (1 - eta)), clipped to B at eta = 1. */
HETGLM_FN R N(hetglm_elastic_net_value)(R w, R lambda, R eta) {
  return lambda * (eta * (R)fabs(w) + ((R)1 - eta) * (R)0.5 * w * w);
}
HETGLM_FN R N(hetglm_elastic_net_conjugate)(R s, R lambda, R eta, R bound) {
  R e = (R)fabs(s) - lambda * eta;
  if (e <= (R)0) return (R)0;
  if (eta >= (R)1) return bound * e;
  return e * e / ((R)2 * lambda * ((R)1 - eta));
}
HETGLM_FN R N(hetglm_elastic_net_step)(R x, R h, R lambda, R eta, R bound) {
  R r = N(hetglm_soft_threshold)(x, lambda * eta) / (h + lambda * ((R)1 - eta));
  return eta >= (R)1 ? N(hetglm_clamp)(r, -bound, bound) : r;
}

/* ============================================================== dispatch by id (generated from the tables) */

#define HETGLM_VALUE_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  case HETGLM_LOSS_##ID: return N(hetglm_##name##_value)(y, z, c);
#define HETGLM_DERIVATIVE_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  case HETGLM_LOSS_##ID: return N(hetglm_##name##_derivative)(y, z, c);
#define HETGLM_CURVATURE_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  case HETGLM_LOSS_##ID: return N(hetglm_##name##_curvature)(y, z, c);
#define HETGLM_CONJUGATE_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  case HETGLM_LOSS_##ID: return N(hetglm_##name##_conjugate)(y, a, c);
#define HETGLM_DUAL_STEP_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  HETGLM_IF(DUAL)(case HETGLM_LOSS_##ID: return N(hetglm_##name##_dual_step)(y, a, z, q, c);)
#define HETGLM_BOUND_CASE_(ID, name, id, L, DUAL, PRIMAL, E) \
  case HETGLM_LOSS_##ID: return (R)L;

/* phi(z) = c l(y, z). */
HETGLM_FN R N(hetglm_loss_value)(int loss, R y, R z, R c) {
  switch (loss) { HETGLM_LOSS_TABLE(HETGLM_VALUE_CASE_) default: return (R)NAN; }
}
/* d phi / dz (a subgradient for hinge). */
HETGLM_FN R N(hetglm_loss_derivative)(int loss, R y, R z, R c) {
  switch (loss) { HETGLM_LOSS_TABLE(HETGLM_DERIVATIVE_CASE_) default: return (R)NAN; }
}
/* d^2 phi / dz^2 (generalized for squared hinge; 0 for hinge). */
HETGLM_FN R N(hetglm_loss_curvature)(int loss, R y, R z, R c) {
  switch (loss) { HETGLM_LOSS_TABLE(HETGLM_CURVATURE_CASE_) default: return (R)NAN; }
}
/* Value, derivative and curvature at z in one call (the per-sample terms of the primal solvers). Each equals the
 * dispatcher above bit for bit, except the logistic curvature: there one exponential e = exp(-|y z|) serves all
 * three (hetglm_softplus_l and hetglm_sigmoid_e at m = -y z), and phi'' = c e / (1 + e)^2, the same sigmoid(y z)
 * (1 - sigmoid(y z)) rounded differently: four transcendental calls per sample become two. */
typedef struct N(hetglm_loss3_s) {
  R value, derivative, curvature;
} N(hetglm_loss3);
/* The logistic terms from e = exp(-|m|) and l = log1p(e), m = -y z (hetglm_loss_terms with the two elementary
 * functions evaluated by the caller: the solvers' vectorized loops over many samples, solvers/src/loss_batch.cpp). */
HETGLM_FN N(hetglm_loss3) N(hetglm_logistic_terms_el)(R y, R z, R c, R e, R l) {
  N(hetglm_loss3) r;
  R m = -y * z, u = (R)1 + e;
  r.value = c * N(hetglm_softplus_l)(m, l);
  r.derivative = -c * y * N(hetglm_sigmoid_e)(m, e);
  r.curvature = c * (e / (u * u));
  return r;
}
HETGLM_FN N(hetglm_loss3) N(hetglm_loss_terms)(int loss, R y, R z, R c) {
  N(hetglm_loss3) r;
  R m, e;
  if (loss == HETGLM_LOSS_LOGISTIC) {
    m = -y * z;
    e = (R)exp(m > (R)0 ? -m : m);
    return N(hetglm_logistic_terms_el)(y, z, c, e, (R)log1p(e));
  }
  r.value = N(hetglm_loss_value)(loss, y, z, c);
  r.derivative = N(hetglm_loss_derivative)(loss, y, z, c);
  r.curvature = N(hetglm_loss_curvature)(loss, y, z, c);
  return r;
}
/* phi^*(-a); +INFINITY outside the dual domain. */
HETGLM_FN R N(hetglm_loss_conjugate)(int loss, R y, R a, R c) {
  switch (loss) { HETGLM_LOSS_TABLE(HETGLM_CONJUGATE_CASE_) default: return (R)NAN; }
}
/* One SDCA coordinate step: the new dual variable for margin z and q = sigma' ||x_i||^2 / (lambda n). */
HETGLM_FN R N(hetglm_dual_step)(int loss, R y, R a, R z, R q, R c) {
  switch (loss) { HETGLM_LOSS_TABLE(HETGLM_DUAL_STEP_CASE_) default: return (R)NAN; }
}
/* The table's curvature bound L = sup phi''/c (0 for a non-smooth loss; NaN for an unknown id). */
HETGLM_FN R N(hetglm_loss_curvature_bound)(int loss) {
  switch (loss) { HETGLM_LOSS_TABLE(HETGLM_BOUND_CASE_) default: return (R)NAN; }
}
#undef HETGLM_VALUE_CASE_
#undef HETGLM_DERIVATIVE_CASE_
#undef HETGLM_CURVATURE_CASE_
#undef HETGLM_CONJUGATE_CASE_
#undef HETGLM_DUAL_STEP_CASE_
#undef HETGLM_BOUND_CASE_

/* The conjugate along the ray of a rescaled dual point (the tight L1 certificate, docs/math.md, "The rescaled dual
 * point"): with a = phi'(z) (phi = c l(y, .) the sample's loss, d = phi'(z) and f = phi(z) already evaluated by the
 * caller), coefficients k0..k3 of an upper bound
 *     phi^*(t a) <= k0 + k1 t + k2 t^2 + k3 t log t        for every t in [0, 1], with equality at t = 1,
 * so that sums of the coefficients over samples bound f^*(t u) for a scale t known only after the reduction.
 *   squared, Huber (|a| <= c):  phi^*(a) = a^2/(2c) + a y                         -> exact: k1 = a y, k2 = a^2/(2c)
 *   squared hinge, b = -y a >= 0: phi^*(a) = -b + b^2/(4c)                        -> exact: k1 = -b, k2 = b^2/(4c)
 *   hinge, b = -y a in [0, c]:  phi^*(a) = -b                                     -> exact: k1 = -b
 *   logistic, p = b/c = sigmoid(-y z): phi^*(t a)/c = t p log p + t p log t + h(t), h(t) = (1 - tp) log(1 - tp)
 *     convex with h(0) = 0, h''(s) = p^2/(1 - sp) <= p^2/(1 - p) on [0, 1]; bounded by its Taylor expansion at
 *     t = 1 with that remainder, h(t) <= h(1) + (1 - t)(p log(1-p) + p) + (1 - t)^2 p^2/(2(1-p)), when
 *     1 - p >= 1e-4, else by its chord h(t) <= t h(1). log p = -(f/c + y z) and log(1 - p) = -f/c need no logarithm. */
typedef struct N(hetglm_conj4_s) {
  R k0, k1, k2, k3;
} N(hetglm_conj4);

HETGLM_FN N(hetglm_conj4) N(hetglm_scaled_conjugate)(int loss, R y, R z, R c, R f, R d) {
  N(hetglm_conj4) k;
  R b, p, q, lq, h1, g1, qq;
  k.k0 = (R)0;
  k.k1 = (R)0;
  k.k2 = (R)0;
  k.k3 = (R)0;
  switch (loss) {
    case HETGLM_LOSS_SQUARED:
    case HETGLM_LOSS_HUBER:
      k.k1 = d * y;
      k.k2 = d * d / ((R)2 * c);
      break;
    case HETGLM_LOSS_SQUARED_HINGE:
      b = -y * d;
      k.k1 = -b;
      k.k2 = b * b / ((R)4 * c);
      break;
    case HETGLM_LOSS_HINGE:
      k.k1 = y * d;
      break;
    case HETGLM_LOSS_LOGISTIC:
      p = -y * d / c;              /* sigmoid(-y z) in [0, 1] */
      p = p < (R)0 ? (R)0 : (p > (R)1 ? (R)1 : p);
      q = (R)1 - p;
      lq = -f / c;                 /* log(1 - p) */
      h1 = q * lq;                 /* h(1) */
      k.k1 = c * (p > (R)0 ? -p * (f / c + y * z) : (R)0);  /* c p log p */
      k.k3 = c * p;
      if (q >= (R)1e-4) {
        g1 = p * lq + p;           /* -h'(1) */
        qq = p * p / ((R)2 * q);   /* max h'' / 2 */
        k.k0 = c * (h1 + g1 + qq);
        k.k1 += c * (-g1 - (R)2 * qq);
        k.k2 = c * qq;
      } else {
        k.k1 += c * h1;
      }
      break;
    default:
      k.k0 = (R)NAN;
      break;
  }
  return k;
}

/* Dual gap term of one sample (unscaled; the total gap is (1/n) times the sum):
 *   phi(z) + phi^*(-a) + a z >= 0, zero iff a is optimal for the margin z. */
HETGLM_FN R N(hetglm_dual_gap)(int loss, R y, R a, R z, R c) {
  return N(hetglm_loss_value)(loss, y, z, c) + N(hetglm_loss_conjugate)(loss, y, a, c) + a * z;
}

#define HETGLM_PEN_VALUE_CASE_(ID, name, id, L1PART, E) \
  case HETGLM_PENALTY_##ID: return N(hetglm_##name##_value)(w, lambda, eta);
#define HETGLM_PEN_CONJUGATE_CASE_(ID, name, id, L1PART, E) \
  case HETGLM_PENALTY_##ID: return N(hetglm_##name##_conjugate)(s, lambda, eta, bound);
#define HETGLM_PEN_STEP_CASE_(ID, name, id, L1PART, E) \
  case HETGLM_PENALTY_##ID: return N(hetglm_##name##_step)(x, h, lambda, eta, bound);

/* g(w) = lambda r(w). */
HETGLM_FN R N(hetglm_penalty_value)(int pen, R w, R lambda, R eta) {
  switch (pen) { HETGLM_PENALTY_TABLE(HETGLM_PEN_VALUE_CASE_) default: return (R)NAN; }
}
/* g^*(s), the L1 part Lipschitzed with the bound B. */
HETGLM_FN R N(hetglm_penalty_conjugate)(int pen, R s, R lambda, R eta, R bound) {
  switch (pen) { HETGLM_PENALTY_TABLE(HETGLM_PEN_CONJUGATE_CASE_) default: return (R)NAN; }
}
/* Proximal coordinate step: argmin_w' s (w' - w) + h/2 (w' - w)^2 + g(w'). h <= 0 (an all-zero column) gives the
 * minimizer of g alone, 0. */
HETGLM_FN R N(hetglm_penalty_step)(int pen, R w, R s, R h, R lambda, R eta, R bound) {
  R x;
  if (!(h > (R)0)) return (R)0;
  x = h * w - s;
  switch (pen) { HETGLM_PENALTY_TABLE(HETGLM_PEN_STEP_CASE_) default: return (R)NAN; }
}
#undef HETGLM_PEN_VALUE_CASE_
#undef HETGLM_PEN_CONJUGATE_CASE_
#undef HETGLM_PEN_STEP_CASE_

/* Primal gap term of one feature: w s + g(w) + g^*(-s) >= 0. */
HETGLM_FN R N(hetglm_primal_gap)(int pen, R w, R s, R lambda, R eta, R bound) {
  return w * s + N(hetglm_penalty_value)(pen, w, lambda, eta) + N(hetglm_penalty_conjugate)(pen, s, lambda, eta, bound);
}

/* The Lipschitzing bound B = f(0) / (lambda eta') for a penalty with an L1 part (eta' = 1 for l1, the l1 ratio for
 * the elastic net, 1 if that is 0), 0 otherwise; f0 = f(0) = (1/n) sum_k phi_k(0). Valid because
 * lambda eta' ||w*||_1 <= P(w*) <= P(0) = f(0). */
HETGLM_FN R N(hetglm_lipschitz_bound)(int pen, R f0, R lambda, R eta) {
  if (pen == HETGLM_PENALTY_L2) return (R)0;
  return f0 / (lambda * (pen == HETGLM_PENALTY_L1 ? (R)1 : eta > (R)0 ? eta : (R)1));
}

/* ============================================================== the coordinate kernel
 * Every solver, backend, device kernel and test reference computes a coordinate's new value with
 * hetglm_coordinate_step and its gap with hetglm_coordinate_gap, from the raw inner product r of the coordinate's
 * column with the shared vector:
 *   dual   r = sum_k x_ik v_k                 (the margin u = r / (lambda n))
 *   primal r = sum_k x_kj phi_k'(v_k)         (the gradient s = r / n)
 * hetglm_shared_factor gives the factor of x_ik (dual v_k) or x_kj (primal phi_k'(v_k)) in that sum. After the step
 * the caller moves its shared vector by sigma' (a' - a) times the column (CoCoA+: Ma, Smith, Jaggi, Jordan,
 * Richtarik, Takac, "Adding vs. Averaging in Distributed Primal-Dual Optimization", ICML 2015; sigma' = 1 is the
 * sequential solver). */
typedef struct N(hetglm_objective_s) {
  int formulation; /* HETGLM_FORM_* */
  int loss;        /* HETGLM_LOSS_* */
  int penalty;     /* HETGLM_PENALTY_* (primal) */
  R lambda;        /* lambda of P(w) */
  R eta;           /* elastic-net l1 ratio (primal) */
  R bound;         /* the Lipschitzing bound B (primal with an L1 part) */
  R scale;         /* r -> u: dual 1/(lambda n), primal 1/n */
  R inv_n;         /* 1/n: the dual gap's scaling */
} N(hetglm_objective);

/* The objective of n samples (lambda, the l1 ratio eta and the bound B as above). */
HETGLM_FN N(hetglm_objective) N(hetglm_objective_make)(int formulation, int loss, int penalty, R lambda, R eta,
                                                        R bound, R inv_n, R inv_lambda_n) {
  N(hetglm_objective) o;
  o.formulation = formulation;
  o.loss = loss;
  o.penalty = penalty;
  o.lambda = lambda;
  o.eta = eta;
  o.bound = bound;
  o.scale = formulation == HETGLM_FORM_DUAL ? inv_lambda_n : inv_n;
  o.inv_n = inv_n;
  return o;
}

/* The factor multiplying the column's value x in r: v_k (dual) or phi_k'(v_k) with the label and weight of
 * sample k (primal). */
HETGLM_FN R N(hetglm_shared_factor)(N(hetglm_objective) o, R v_k, R y_k, R c_k) {
  return o.formulation == HETGLM_FORM_DUAL ? v_k : N(hetglm_loss_derivative)(o.loss, y_k, v_k, c_k);
}

/* The coordinate kernel: the new value of a coordinate whose current value is `a`, from its raw inner product r,
 * its curvature (dual q_i = ||x_i||^2 / (lambda n); primal H_j, an upper bound of the coordinate's curvature of f),
 * the label y and weight c of its sample (dual; unused in the primal) and the CoCoA+ scaling sigma'. */
HETGLM_FN R N(hetglm_coordinate_step)(N(hetglm_objective) o, R a, R r, R curvature, R y, R c, R sigma) {
  R u = r * o.scale;
  if (o.formulation == HETGLM_FORM_DUAL) return N(hetglm_dual_step)(o.loss, y, a, u, sigma * curvature, c);
  return N(hetglm_penalty_step)(o.penalty, a, u, sigma * curvature, o.lambda, o.eta, o.bound);
}

/* The coordinate's share of the duality gap (scaled so the shares sum to P - D when v = A alpha). */
HETGLM_FN R N(hetglm_coordinate_gap)(N(hetglm_objective) o, R a, R r, R y, R c) {
  R u = r * o.scale;
  if (o.formulation == HETGLM_FORM_DUAL) return N(hetglm_dual_gap)(o.loss, y, a, u, c) * o.inv_n;
  return N(hetglm_primal_gap)(o.penalty, a, u, o.lambda, o.eta, o.bound);
}

#undef R
#undef N
