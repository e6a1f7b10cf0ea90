// SPDX-License-Identifier: Apache-2.0
// The loss and penalty math of glm_math.h: conjugates against a numerical supremum, the coordinate steps
// against a brute-force 1-D optimization, gaps non-negative and zero at the 1-D optimum, both precisions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "hetglm/losses.hpp"

using namespace hetglm;

namespace {

const Loss kLosses[] = {Loss::squared, Loss::logistic, Loss::hinge, Loss::squared_hinge};
const Penalty kPenalties[] = {Penalty::l2, Penalty::l1, Penalty::elastic_net};

const char* name(Loss l) {
  switch (l) {
    case Loss::squared: return "squared";
    case Loss::logistic: return "logistic";
    case Loss::hinge: return "hinge";
    default: return "squared_hinge";
  }
}

// Golden-section maximization of a concave function on [lo, hi].
double argmax_1d(const std::function<double(double)>& f, double lo, double hi) {
  const double g = (std::sqrt(5.0) - 1) / 2;
  double a = lo, b = hi, c = b - g * (b - a), d = a + g * (b - a);
  double fc = f(c), fd = f(d);
  for (int it = 0; it < 300; ++it) {
    if (fc > fd) {
      b = d, d = c, fd = fc, c = b - g * (b - a), fc = f(c);
    } else {
      a = c, c = d, fc = fd, d = a + g * (b - a), fd = f(d);
    }
  }
  return 0.5 * (a + b);
}

// Dual domain of a, as an interval for golden search (b = y a).
void dual_domain(Loss l, double y, double c, double& lo, double& hi) {
  double blo = 0, bhi = c;
  if (l == Loss::squared) {
    lo = -100, hi = 100;
    return;
  }
  if (l == Loss::squared_hinge) bhi = 50 * c;
  lo = y > 0 ? blo : -bhi;
  hi = y > 0 ? bhi : -blo;
}

}  // namespace

TEST(Losses, ConjugateMatchesNumericalSupremum) {
  // phi^*(-a) = sup_z (-a z - phi(z)), checked on a fine grid of z.
  std::mt19937_64 rng(7);
  for (Loss l : kLosses) {
    for (int t = 0; t < 20; ++t) {
      const double y = l == Loss::squared ? std::uniform_real_distribution<>(-2, 2)(rng) : (t % 2 ? 1.0 : -1.0);
      const double c = std::uniform_real_distribution<>(0.5, 2)(rng);
      double lo, hi;
      dual_domain(l, y, c, lo, hi);
      if (l == Loss::squared_hinge) hi = y > 0 ? 3 * c : hi, lo = y > 0 ? lo : -3 * c;
      if (l == Loss::squared) lo = -3, hi = 3;
      const double a = lo + (hi - lo) * std::uniform_real_distribution<>(0.05, 0.95)(rng);
      double sup = -INFINITY;
      for (int k = -200000; k <= 200000; ++k) {
        const double z = k * 1e-4;
        sup = std::max(sup, -a * z - math::loss_value(int(l), y, z, c));
      }
      SCOPED_TRACE(name(l));
      EXPECT_NEAR(math::loss_conjugate(int(l), y, a, c), sup, 1e-5 * (1 + std::fabs(sup)));
    }
  }
}

TEST(Losses, ConjugateIsInfiniteOutsideTheDualDomain) {
  for (Loss l : {Loss::logistic, Loss::hinge, Loss::squared_hinge}) {
    SCOPED_TRACE(name(l));
    EXPECT_TRUE(std::isinf(math::loss_conjugate(int(l), 1.0, -0.1, 1.0)));   // b < 0
    EXPECT_TRUE(std::isinf(math::loss_conjugate(int(l), -1.0, 0.1, 1.0)));   // b = -0.1 < 0
  }
  EXPECT_TRUE(std::isinf(math::loss_conjugate(int(Loss::hinge), 1.0, 1.5, 1.0)));     // b > c
  EXPECT_TRUE(std::isinf(math::loss_conjugate(int(Loss::logistic), 1.0, 2.5, 2.0)));  // b > c
}

TEST(Losses, DualStepIsTheExactMaximizer) {
  // a' = argmax_a' -phi^*(-a') - z (a' - a) - q/2 (a' - a)^2, compared with golden-section search.
  std::mt19937_64 rng(11);
  for (Loss l : kLosses) {
    for (int t = 0; t < 200; ++t) {
      const double y = l == Loss::squared ? std::uniform_real_distribution<>(-3, 3)(rng) : (t % 2 ? 1.0 : -1.0);
      const double c = std::uniform_real_distribution<>(0.2, 3)(rng);
      const double q = t % 17 == 0 ? 0.0 : std::exp(std::uniform_real_distribution<>(-5, 5)(rng));
      const double z = std::uniform_real_distribution<>(-4, 4)(rng);
      double lo, hi;
      dual_domain(l, y, c, lo, hi);
      const double a = (l == Loss::squared) ? std::uniform_real_distribution<>(-3, 3)(rng)
                                            : lo + (hi - lo) * std::uniform_real_distribution<>(0, 1)(rng) * (l == Loss::squared_hinge ? 0.05 : 1.0);
      auto obj = [&](double ap) {
        return -math::loss_conjugate(int(l), y, ap, c) - z * (ap - a) - 0.5 * q * (ap - a) * (ap - a);
      };
      if (q == 0 && l == Loss::squared) continue;  // unbounded only if c = inf; fine, but golden range too small
      const double got = math::dual_step(int(l), y, a, z, q, c);
      const double best = argmax_1d(obj, lo, hi);
      SCOPED_TRACE(::testing::Message() << name(l) << " y=" << y << " c=" << c << " q=" << q << " z=" << z << " a=" << a);
      EXPECT_GE(obj(got), obj(best) - 1e-9 * (1 + std::fabs(obj(best))));
      EXPECT_TRUE(std::isfinite(math::loss_conjugate(int(l), y, got, c)));
    }
  }
}

// The box duals' G (glm_math.h hetglm_{hinge,squared_hinge}_dual_gradient, the shrinking rule's quantity) is the
// derivative of the 1-D dual objective in b = y a at the step's start (central differences inside the domain), and
// the steps built on it give the closed forms of the SDCA paper / LIBLINEAR bit for bit.
TEST(Losses, BoxDualGradientIsTheDualDerivativeAndTheStepsKeepTheirClosedForms) {
  std::mt19937_64 rng(5);
  for (int t = 0; t < 400; ++t) {
    const double y = t % 2 ? 1.0 : -1.0;
    const double c = std::uniform_real_distribution<>(0.2, 3)(rng);
    const double q = std::exp(std::uniform_real_distribution<>(-5, 5)(rng));
    const double z = std::uniform_real_distribution<>(-4, 4)(rng);
    const double b = std::uniform_real_distribution<>(0.1, 0.9)(rng) * c;  // inside both domains
    const double a = y * b, m = y * z;
    SCOPED_TRACE(::testing::Message() << "y=" << y << " c=" << c << " q=" << q << " z=" << z << " b=" << b);
    // -phi^*(-a') - z (a' - a) as a function of b' (the dual's part of coordinate i, up to constants): its derivative
    // at b is -G.
    for (Loss l : {Loss::hinge, Loss::squared_hinge}) {
      auto dual = [&](double bp) { return -math::loss_conjugate(int(l), y, y * bp, c) - z * (y * bp - a); };
      const double h = 1e-6, numeric = (dual(b + h) - dual(b - h)) / (2 * h);
      const double G = l == Loss::hinge ? hetglm_hinge_dual_gradient_d(y, a, z, c)
                                        : hetglm_squared_hinge_dual_gradient_d(y, a, z, c);
      EXPECT_NEAR(-G, numeric, 1e-6 * (1 + std::fabs(G))) << name(l);
    }
    EXPECT_EQ(hetglm_hinge_dual_gradient_d(y, a, z, c), m - 1);
    EXPECT_EQ(math::dual_step(int(Loss::hinge), y, a, z, q, c), y * std::clamp(b + (1 - m) / q, 0.0, c));
    const double bn = b + (1 - m - b / (2 * c)) / (q + 1 / (2 * c));
    EXPECT_EQ(math::dual_step(int(Loss::squared_hinge), y, a, z, q, c), y * (bn > 0 ? bn : 0.0));
  }
}

TEST(Losses, DualGapIsNonNegativeAndZeroAtTheOptimum) {
  std::mt19937_64 rng(3);
  for (Loss l : kLosses) {
    for (int t = 0; t < 500; ++t) {
      const double y = l == Loss::squared ? std::uniform_real_distribution<>(-3, 3)(rng) : (t % 2 ? 1.0 : -1.0);
      const double c = std::uniform_real_distribution<>(0.2, 3)(rng);
      const double z = std::uniform_real_distribution<>(-5, 5)(rng);
      double lo, hi;
      dual_domain(l, y, c, lo, hi);
      const double a = lo + (hi - lo) * std::uniform_real_distribution<>(0, 1)(rng);
      SCOPED_TRACE(name(l));
      EXPECT_GE(math::dual_gap(int(l), y, a, z, c), -1e-12);
      // 1-D problem min_z phi(z) + (1/2)(z - z0)^2 ... its dual optimum: a* with z* = z0 - ... Simplest closed
      // check: the step with q -> 0 makes a the Fenchel-Young partner of z, so the gap vanishes.
      const double astar = math::dual_step(int(l), y, a, z, 0.0, c);
      const double g = math::dual_gap(int(l), y, astar, z, c);
      if (l == Loss::hinge && std::fabs(1 - y * z) < 1e-12) continue;
      EXPECT_NEAR(g, 0.0, 1e-10);
    }
  }
}

TEST(Losses, OneDimensionalSdcaReachesZeroGap) {
  // One sample, one feature: P(w) = c l(y, x w) + lambda/2 w^2 (n = 1). Iterating the dual step with
  // v = a x converges to the optimum, where the gap term is 0 and w matches a 1-D primal search.
  for (Loss l : kLosses) {
    const double x = 1.7, y = l == Loss::squared ? 0.8 : 1.0, c = 1.3, lambda = 0.4;
    double a = 0;
    for (int it = 0; it < 200; ++it) {
      const double w = a * x / lambda;
      a = math::dual_step(int(l), y, a, x * w, x * x / lambda, c);
    }
    const double w = a * x / lambda;
    auto primal = [&](double ww) { return math::loss_value(int(l), y, x * ww, c) + 0.5 * lambda * ww * ww; };
    const double wbest = argmax_1d([&](double ww) { return -primal(ww); }, -20, 20);
    SCOPED_TRACE(name(l));
    EXPECT_NEAR(math::dual_gap(int(l), y, a, x * w, c), 0.0, 1e-12);
    EXPECT_NEAR(w, wbest, 1e-6);
    // P - D with D = -phi^*(-a) - lambda/2 w^2 equals the gap term.
    const double D = -math::loss_conjugate(int(l), y, a, c) - 0.5 * lambda * w * w;
    EXPECT_NEAR(primal(w) - D, math::dual_gap(int(l), y, a, x * w, c), 1e-12);
  }
}

TEST(Losses, DerivativeAndCurvatureMatchFiniteDifferences) {
  for (Loss l : {Loss::squared, Loss::logistic, Loss::squared_hinge}) {
    for (double z : {-2.3, -0.4, 0.3, 0.7, 1.9}) {
      const double y = l == Loss::squared ? 0.6 : -1.0, c = 1.4, h = 1e-6;
      const double fd = (math::loss_value(int(l), y, z + h, c) - math::loss_value(int(l), y, z - h, c)) / (2 * h);
      const double fd2 =
          (math::loss_derivative(int(l), y, z + h, c) - math::loss_derivative(int(l), y, z - h, c)) / (2 * h);
      SCOPED_TRACE(name(l));
      EXPECT_NEAR(math::loss_derivative(int(l), y, z, c), fd, 1e-6);
      EXPECT_NEAR(math::loss_curvature(int(l), y, z, c), fd2, 1e-5);
    }
  }
}

// loss_terms (the Newton solver's one call per sample): value and derivative bit-identical to the dispatchers, the
// curvature equal to loss_curvature within rounding (logistic: c e / (1 + e)^2 from the shared exponential), also
// where the margin saturates the exponential.
TEST(Losses, LossTermsEqualTheSeparateCalls) {
  for (Loss l : {Loss::squared, Loss::logistic, Loss::squared_hinge, Loss::hinge}) {
    for (double y : {-1.0, 1.0}) {
      for (double z : {-800.0, -40.0, -2.3, -0.4, 0.0, 0.3, 0.7, 1.9, 40.0, 800.0}) {
        const double c = 1.4;
        const auto t = math::loss_terms(int(l), y, z, c);
        SCOPED_TRACE(std::string(name(l)) + " y=" + std::to_string(y) + " z=" + std::to_string(z));
        EXPECT_EQ(t.value, math::loss_value(int(l), y, z, c));
        EXPECT_EQ(t.derivative, math::loss_derivative(int(l), y, z, c));
        const double h = math::loss_curvature(int(l), y, z, c);
        // 1 - sigmoid rounds: loss_curvature is accurate to c 2^-53 in absolute terms (0 at z = 40 where the
        // value is 5.9e-18), loss_terms relatively, against the long-double reference c e / (1 + e)^2.
        EXPECT_NEAR(t.curvature, h, 2e-16 * c);
        if (l == Loss::logistic) {
          const long double e = std::exp(-std::fabs(static_cast<long double>(z)));
          const double ref = static_cast<double>(c * e / ((1 + e) * (1 + e)));
          EXPECT_NEAR(t.curvature, ref, 1e-15 * ref);
        }
        EXPECT_TRUE(std::isfinite(t.value) && std::isfinite(t.derivative) && std::isfinite(t.curvature));
      }
    }
  }
  const auto f = math::loss_terms(int(Loss::logistic), 1.0f, 0.7f, 1.0f);
  EXPECT_NEAR(f.curvature, math::loss_curvature(int(Loss::logistic), 1.0, 0.7, 1.0), 1e-7);
}

TEST(Losses, LogisticStepIsAccurateNearTheBounds) {
  // Very confident margins push b to ~0 or ~c; the logit-space Newton must still solve the 1-D problem.
  for (double z : {-15.0, -8.0, 8.0, 15.0}) {
    for (double q : {1e-6, 1.0, 1e4}) {
      const double a = math::dual_step(int(Loss::logistic), 1.0, 0.5, z, q, 1.0);
      // Optimality: log((1-t)/t) - z - q (t - 0.5) = 0 with t = a.
      const double res = std::log1p(-a) - std::log(a) - z - q * (a - 0.5);
      EXPECT_NEAR(res, 0.0, 1e-8 * (1 + std::fabs(z) + q)) << "z=" << z << " q=" << q;
      EXPECT_GT(a, 0.0);
      EXPECT_LT(a, 1.0);
    }
  }
  // Saturated margins: t rounds to 0 or 1 in double; the step stays in the domain and the gap is ~0.
  for (double z : {-40.0, 40.0}) {
    const double a = math::dual_step(int(Loss::logistic), 1.0, 0.5, z, 1e-9, 1.0);
    EXPECT_GE(a, 0.0);
    EXPECT_LE(a, 1.0);
    EXPECT_NEAR(math::dual_gap(int(Loss::logistic), 1.0, a, z, 1.0), 0.0, 1e-12);
  }
}

TEST(Losses, FloatAndDoubleAgree) {
  for (Loss l : kLosses) {
    const double y = 1.0, a = 0.3, z = 0.4, q = 0.7, c = 1.0;
    const float af = math::dual_step(int(l), 1.0f, 0.3f, 0.4f, 0.7f, 1.0f);
    const double ad = math::dual_step(int(l), y, a, z, q, c);
    SCOPED_TRACE(name(l));
    EXPECT_NEAR(af, ad, 1e-5);
    EXPECT_NEAR(math::dual_gap(int(l), 1.0f, 0.3f, 0.4f, 1.0f), math::dual_gap(int(l), y, a, z, c), 1e-5);
  }
}

TEST(Penalties, ConjugateMatchesNumericalSupremum) {
  const double lambda = 0.7, eta = 0.4, bound = 3.0;
  for (Penalty p : kPenalties) {
    for (double s : {-2.5, -0.9, -0.1, 0.0, 0.2, 0.69, 1.3, 4.0}) {
      // g^*(s) = sup_{w} s w - g(w), over |w| <= B when g has an L1 part (Lipschitzing).
      double sup = -INFINITY;
      const double W = p == Penalty::l1 ? bound : 50.0;
      for (int k = -500000; k <= 500000; ++k) {
        const double w = W * k / 500000.0;
        sup = std::max(sup, s * w - math::penalty_value(int(p), w, lambda, eta));
      }
      if (p == Penalty::elastic_net) {  // eta < 1: exact conjugate, no bound needed (the sup is interior)
        EXPECT_NEAR(math::penalty_conjugate(int(p), s, lambda, eta, bound), sup, 1e-6);
      } else {
        EXPECT_NEAR(math::penalty_conjugate(int(p), s, lambda, eta, bound), sup, 1e-6);
      }
    }
  }
}

TEST(Penalties, StepIsTheProximalMinimizerAndGapVanishesAtTheOptimum) {
  const double lambda = 0.5, eta = 0.3, bound = 10.0;
  std::mt19937_64 rng(5);
  for (Penalty p : kPenalties) {
    for (int t = 0; t < 200; ++t) {
      const double w = std::uniform_real_distribution<>(-3, 3)(rng);
      const double s = std::uniform_real_distribution<>(-3, 3)(rng);
      const double h = std::exp(std::uniform_real_distribution<>(-3, 3)(rng));
      auto obj = [&](double wp) {
        return -(s * (wp - w) + 0.5 * h * (wp - w) * (wp - w) + math::penalty_value(int(p), wp, lambda, eta));
      };
      const double got = math::penalty_step(int(p), w, s, h, lambda, eta, bound);
      const double best = argmax_1d(obj, -bound, bound);
      EXPECT_GE(obj(got), obj(best) - 1e-10);
    }
    // 1-D quadratic f(w) = h/2 (w - w0)^2: the fixed point of the step is optimal and its gap is 0.
    const double h = 2.0, w0 = 1.7;
    double w = 0;
    for (int it = 0; it < 5; ++it) w = math::penalty_step(int(p), w, h * (w - w0), h, lambda, eta, bound);
    EXPECT_NEAR(math::primal_gap(int(p), w, h * (w - w0), lambda, eta, bound), 0.0, 1e-12);
    // Away from the optimum the gap is positive.
    EXPECT_GT(math::primal_gap(int(p), w + 0.5, h * (w + 0.5 - w0), lambda, eta, bound), 1e-3);
  }
}

TEST(Penalties, LassoStepIsSoftThresholdingClippedToTheBound) {
  // w' = S_lambda(h w - s) / h, clipped to [-B, B].
  EXPECT_DOUBLE_EQ(math::penalty_step(int(Penalty::l1), 0.0, -3.0, 2.0, 1.0, 1.0, 10.0), 1.0);
  EXPECT_DOUBLE_EQ(math::penalty_step(int(Penalty::l1), 0.0, 0.5, 2.0, 1.0, 1.0, 10.0), 0.0);
  EXPECT_DOUBLE_EQ(math::penalty_step(int(Penalty::l1), 0.0, -30.0, 1.0, 1.0, 1.0, 10.0), 10.0);
  EXPECT_DOUBLE_EQ(math::penalty_step(int(Penalty::l1), 1.0, 0.0, 0.0, 1.0, 1.0, 10.0), 0.0);  // empty column
}
