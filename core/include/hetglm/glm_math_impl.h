/* SPDX-License-Identifier: Apache-2.0
 * glm_math_impl.h: body of glm_math.h, included once per precision with HETGLM_REAL / HETGLM_SFX set.
 * No include guard on purpose. Do not include directly: include glm_math.h. Formulas: see glm_math.h
 * and docs/math.md.
 */
#define R HETGLM_REAL
#define N(name) HETGLM_CAT(name, HETGLM_SFX)

/* log(1 + exp(t)) without overflow. */
HETGLM_FN R N(hetglm_softplus)(R t) {
  return t > (R)0 ? t + (R)log1p(exp(-t)) : (R)log1p(exp(t));
}

/* 1 / (1 + exp(-t)) without overflow. */
HETGLM_FN R N(hetglm_sigmoid)(R t) {
  if (t >= (R)0) {
    R e = (R)exp(-t);
    return (R)1 / ((R)1 + e);
  }
  R e = (R)exp(t);
  return e / ((R)1 + e);
}

/* x log x with 0 log 0 = 0. */
HETGLM_FN R N(hetglm_xlogx)(R x) { return x > (R)0 ? x * (R)log(x) : (R)0; }

HETGLM_FN R N(hetglm_clamp)(R x, R lo, R hi) { return x < lo ? lo : (x > hi ? hi : x); }

HETGLM_FN R N(hetglm_soft_threshold)(R x, R tau) {
  return x > tau ? x - tau : (x < -tau ? x + tau : (R)0);
}

/* ---------------------------------------------------------------- losses: primal side */

/* phi(z) = c l(y, z). */
HETGLM_FN R N(hetglm_loss_value)(int loss, R y, R z, R c) {
  R m;
  switch (loss) {
    case HETGLM_LOSS_SQUARED:
      m = z - y;
      return c * (R)0.5 * m * m;
    case HETGLM_LOSS_LOGISTIC:
      return c * N(hetglm_softplus)(-y * z);
    case HETGLM_LOSS_HINGE:
      m = (R)1 - y * z;
      return m > (R)0 ? c * m : (R)0;
    default: /* HETGLM_LOSS_SQUARED_HINGE */
      m = (R)1 - y * z;
      return m > (R)0 ? c * m * m : (R)0;
  }
}

/* d phi / dz (a subgradient for hinge). */
HETGLM_FN R N(hetglm_loss_derivative)(int loss, R y, R z, R c) {
  R m;
  switch (loss) {
    case HETGLM_LOSS_SQUARED:
      return c * (z - y);
    case HETGLM_LOSS_LOGISTIC:
      return -c * y * N(hetglm_sigmoid)(-y * z);
    case HETGLM_LOSS_HINGE:
      return y * z < (R)1 ? -c * y : (R)0;
    default:
      m = (R)1 - y * z;
      return m > (R)0 ? (R)-2 * c * y * m : (R)0;
  }
}

/* d^2 phi / dz^2 (generalized for squared hinge; 0 for hinge). */
HETGLM_FN R N(hetglm_loss_curvature)(int loss, R y, R z, R c) {
  R p;
  switch (loss) {
    case HETGLM_LOSS_SQUARED:
      return c;
    case HETGLM_LOSS_LOGISTIC:
      p = N(hetglm_sigmoid)(y * z);
      return c * p * ((R)1 - p);
    case HETGLM_LOSS_HINGE:
      return (R)0;
    default:
      return y * z < (R)1 ? (R)2 * c : (R)0;
  }
}

/* ---------------------------------------------------------------- losses: dual side */

/* phi^*(-a): the conjugate of phi at -a; +INFINITY outside the dual domain. For the classification
 * losses b = y a must lie in [0, c] (hinge, logistic) or [0, inf) (squared hinge). */
HETGLM_FN R N(hetglm_loss_conjugate)(int loss, R y, R a, R c) {
  R b = y * a, t;
  switch (loss) {
    case HETGLM_LOSS_SQUARED:
      return a * a / ((R)2 * c) - a * y;
    case HETGLM_LOSS_LOGISTIC:
      if (b < (R)0 || b > c) return (R)INFINITY;
      t = b / c;
      return c * (N(hetglm_xlogx)(t) + N(hetglm_xlogx)((R)1 - t));
    case HETGLM_LOSS_HINGE:
      if (b < (R)0 || b > c) return (R)INFINITY;
      return -b;
    default:
      if (b < (R)0) return (R)INFINITY;
      return -b + b * b / ((R)4 * c);
  }
}

/* One SDCA coordinate step: the new dual variable a' maximizing
 *   -phi^*(-a') - z (a' - a) - q/2 (a' - a)^2,
 * z = x_i.w (the margin under the current shared vector), q = sigma' ||x_i||^2 / (lambda n) >= 0.
 * hinge:         b' = clip(b + (1 - y z) / q, 0, c)            (SDCA paper, Sec. 5.1; LIBLINEAR -s 3)
 * squared hinge: b' = max(0, b + (1 - y z - b/(2c)) / (q + 1/(2c)))       (LIBLINEAR -s 1, D_ii = 1/(2C))
 * squared:       a' = a + (y - z - a/c) / (q + 1/c)
 * logistic:      t = b'/c solves log((1-t)/t) - y z - q c (t - b/c) = 0; solved for s = logit(t) by
 *                Newton safeguarded with a bisection bracket (the residual's slope lies in
 *                [-1 - q c / 4, -1], so it is well conditioned even when t is near 0 or 1). */
HETGLM_FN R N(hetglm_dual_step)(int loss, R y, R a, R z, R q, R c) {
  R b = y * a, m = y * z, bn;
  switch (loss) {
    case HETGLM_LOSS_SQUARED:
      return a + (y - z - a / c) / (q + (R)1 / c);
    case HETGLM_LOSS_HINGE:
      if (q > (R)0) {
        bn = N(hetglm_clamp)(b + ((R)1 - m) / q, (R)0, c);
      } else {
        bn = (R)1 - m > (R)0 ? c : (R)0;
      }
      return y * bn;
    case HETGLM_LOSS_SQUARED_HINGE:
      bn = b + ((R)1 - m - b / ((R)2 * c)) / (q + (R)1 / ((R)2 * c));
      return y * (bn > (R)0 ? bn : (R)0);
    default: { /* HETGLM_LOSS_LOGISTIC */
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
  }
}

/* Dual gap term of one sample (unscaled; the total gap is (1/n) times the sum):
 *   phi(z) + phi^*(-a) + a z >= 0, zero iff a is optimal for the margin z. */
HETGLM_FN R N(hetglm_dual_gap)(int loss, R y, R a, R z, R c) {
  return N(hetglm_loss_value)(loss, y, z, c) + N(hetglm_loss_conjugate)(loss, y, a, c) + a * z;
}

/* ---------------------------------------------------------------- penalties (primal coordinates) */

/* g(w) = lambda r(w); eta = l1_ratio for the elastic net (ignored otherwise). */
HETGLM_FN R N(hetglm_penalty_value)(int pen, R w, R lambda, R eta) {
  switch (pen) {
    case HETGLM_PENALTY_L2:
      return lambda * (R)0.5 * w * w;
    case HETGLM_PENALTY_L1:
      return lambda * (R)fabs(w);
    default:
      return lambda * (eta * (R)fabs(w) + ((R)1 - eta) * (R)0.5 * w * w);
  }
}

/* g^*(s) (even in s). L1 (and the elastic net at eta = 1) use the Lipschitzed conjugate with bound B. */
HETGLM_FN R N(hetglm_penalty_conjugate)(int pen, R s, R lambda, R eta, R bound) {
  R e;
  switch (pen) {
    case HETGLM_PENALTY_L2:
      return s * s / ((R)2 * lambda);
    case HETGLM_PENALTY_L1:
      e = (R)fabs(s) - lambda;
      return e > (R)0 ? bound * e : (R)0;
    default:
      e = (R)fabs(s) - lambda * eta;
      if (e <= (R)0) return (R)0;
      if (eta >= (R)1) return bound * e;
      return e * e / ((R)2 * lambda * ((R)1 - eta));
  }
}

/* Proximal coordinate step: argmin_w' s (w' - w) + H/2 (w' - w)^2 + g(w'), clipped to |w'| <= B when g
 * has an L1 part. H <= 0 (an all-zero column) gives the minimizer of g alone, 0. */
HETGLM_FN R N(hetglm_penalty_step)(int pen, R w, R s, R h, R lambda, R eta, R bound) {
  R x, r;
  if (!(h > (R)0)) return (R)0;
  x = h * w - s;
  switch (pen) {
    case HETGLM_PENALTY_L2:
      return x / (h + lambda);
    case HETGLM_PENALTY_L1:
      r = N(hetglm_soft_threshold)(x, lambda) / h;
      return N(hetglm_clamp)(r, -bound, bound);
    default:
      r = N(hetglm_soft_threshold)(x, lambda * eta) / (h + lambda * ((R)1 - eta));
      return eta >= (R)1 ? N(hetglm_clamp)(r, -bound, bound) : r;
  }
}

/* Primal gap term of one feature: w s + g(w) + g^*(-s) >= 0. */
HETGLM_FN R N(hetglm_primal_gap)(int pen, R w, R s, R lambda, R eta, R bound) {
  return w * s + N(hetglm_penalty_value)(pen, w, lambda, eta) +
         N(hetglm_penalty_conjugate)(pen, s, lambda, eta, bound);
}

#undef R
#undef N
