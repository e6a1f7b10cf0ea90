// SPDX-License-Identifier: Apache-2.0
// C simulation of the FPGA kernel (plain g++): the top function hetglm_scd_epoch, called as a testbench calls it
// (arrays packed as kernel_abi.hpp says), equals
//   (1) scd_epoch_host() below: a host reference of the same algorithm in float (same coordinate order, same
//       partial-sum order; docs/conventions.md, "FPGA C simulation"), within float rounding, and
//   (2) the core's reference epoch in double (conformance.hpp reference_epoch: the forms' coordinate kernel), within
//       the float32 accelerator tolerance of the backend conformance test,
// for every formulation of the conformance list, on real data. Also: sizes over the kernel's maxima are refused with
// an error code.
#include <cmath>
#include <vector>

#include "../../tests/backends/conformance.hpp"
#include "hetglm/hls/kernel_abi.hpp"
#include "hetglm/glm_math.h"
#include "hetglm/hls/scd_epoch_top.hpp"
#include "hetglm/solvers/duhl.hpp"

namespace hetglm::testing {
namespace {
namespace abi = hls::abi;

/// The kernel's packed arguments for working set `ws` of `A` (kernel_abi.hpp).
struct Packed {
  std::vector<float> val, coord, alpha, v, row;
  std::vector<int> idx, ptr, order, status = std::vector<int>(abi::kStatusWords, 0);
  abi::Scalars s{};
  ObjectiveF obj{};  ///< the same scalars as the coordinate kernel's objective (host reference)
};

Packed pack(const ObjectiveDesc& d, const CsrMatrix& A, const std::vector<index_t>& ws, int epochs,
            std::uint64_t seed, double sigma) {
  Packed k;
  // Columns in reverse working-set order in the pool, so offsets differ from positions (col_ptr is honoured).
  k.ptr.assign(2 * ws.size(), 0);
  for (std::size_t q = ws.size(); q-- > 0;) {
    const index_t i = ws[q];
    k.ptr[2 * q] = static_cast<int>(k.val.size());
    k.ptr[2 * q + 1] = static_cast<int>(A.offsets[i + 1] - A.offsets[i]);
    for (offset_t e = A.offsets[i]; e < A.offsets[i + 1]; ++e) {
      k.val.push_back(A.values[e]);
      k.idx.push_back(A.indices[e]);
    }
  }
  for (index_t i : ws) {
    k.coord.push_back(d.coord_labels ? float(d.coord_labels[i]) : 0.0f);
    k.coord.push_back(d.coord_weights ? float(d.coord_weights[i]) : 1.0f);
    k.coord.push_back(float(d.coord_curvature[i]));
    k.coord.push_back(0.0f);
  }
  k.alpha.assign(ws.size(), 0.0f);
  k.v.assign(static_cast<std::size_t>(d.dim), 0.0f);
  k.row.assign(2 * static_cast<std::size_t>(std::max(d.dim, 1)), 0.0f);
  if (!d.dual())
    for (int r = 0; r < d.dim; ++r) k.row[2 * r] = float(d.row_labels[r]), k.row[2 * r + 1] = float(d.row_weights[r]);
  for (int e = 0; e < epochs; ++e)
    for (std::int32_t p : epoch_order(ws.size(), seed, e)) k.order.push_back(p);
  const ObjectiveF o = to_float(d.obj);
  k.s = abi::Scalars{static_cast<int>(ws.size()), d.dim, epochs, o.formulation, o.loss, o.penalty, o.scale,
                     float(sigma), o.lambda, o.eta, o.bound};
  k.obj = o;
  return k;
}

void run_kernel(Packed& k) {
  hetglm_scd_epoch(k.val.data(), k.idx.data(), k.ptr.data(), k.coord.data(), k.alpha.data(), k.v.data(),
                   k.row.data(), k.order.data(), k.status.data(), k.s.ws, k.s.dim, k.s.epochs, k.s.formulation,
                   k.s.loss, k.s.penalty, k.s.scale, k.s.sigma, k.s.lambda, k.s.eta, k.s.bound);
}

/// The host reference of the kernel's algorithm: the same order, float arithmetic, the same kPartials interleaved
/// partial sums summed in the same order, the same glm_math.h float step.
void scd_epoch_host(Packed& k) {
  const abi::Scalars& s = k.s;
  for (int e = 0; e < s.epochs; ++e)
    for (int t = 0; t < s.ws; ++t) {
      const int p = k.order[static_cast<std::size_t>(e * s.ws + t)];
      const int b = k.ptr[2 * p], len = k.ptr[2 * p + 1];
      float part[abi::kPartials] = {};
      for (int q = 0; q < len; ++q) {
        const int r = k.idx[b + q];
        const float g = hetglm_shared_factor_f(k.obj, k.v[r], k.row[2 * r], k.row[2 * r + 1]);
        part[q % abi::kPartials] += k.val[b + q] * g;
      }
      float sum = 0.0f;
      for (float x : part) sum += x;
      const float a = k.alpha[p];
      // The coordinate kernel (glm_math.h), as the device's step.
      const float an = hetglm_coordinate_step_f(k.obj, a, sum, k.coord[4 * p + 2], k.coord[4 * p], k.coord[4 * p + 1],
                                                s.sigma);
      if (an - a == 0.0f) continue;
      k.alpha[p] = an;
      for (int q = 0; q < len; ++q) k.v[k.idx[b + q]] += s.sigma * (an - a) * k.val[b + q];
    }
}

class CSim : public ::testing::TestWithParam<ModelCase> {};

TEST_P(CSim, KernelEpochEqualsTheHostReferenceOfTheSameAlgorithm) {
  const ModelCase& mc = GetParam();
  auto prob = make_problem(mc);
  with_form(*prob, [&](const auto& form) {
    const CsrMatrix& A = *form.A;
    std::vector<double> curv;
    const ObjectiveDesc d = describe_objective(form, curv);
    std::vector<index_t> ws;
    for (index_t i = 0; i < form.n_coords(); i += (form.n_coords() > 100 ? 2 : 1)) ws.push_back(i);
    for (double sigma : {1.0, 2.0}) {
      SCOPED_TRACE(sigma);
      const int epochs = 3;
      Packed kern = pack(d, A, ws, epochs, 11, sigma), host = kern;
      run_kernel(kern);
      scd_epoch_host(host);
      EXPECT_EQ(kern.status[abi::kStatusError], abi::kErrNone);
      EXPECT_EQ(kern.status[abi::kStatusUpdates], epochs * static_cast<int>(ws.size()));
      EXPECT_EQ(kern.status[abi::kStatusNonFinite], 0);
      // (1) the same algorithm in float on the host: equal within float rounding (here: bit-identical, since
      // both evaluate the same float operations in the same order; the bound allows a contracted FMA).
      float amax = 0, vmax = 0;
      for (float a : host.alpha) amax = std::max(amax, std::fabs(a));
      for (float x : host.v) vmax = std::max(vmax, std::fabs(x));
      std::size_t exact = 0;
      for (std::size_t p = 0; p < ws.size(); ++p) {
        ASSERT_LE(std::fabs(kern.alpha[p] - host.alpha[p]), 1e-6f * std::max(1.0f, amax)) << "alpha at " << p;
        exact += kern.alpha[p] == host.alpha[p];
      }
      for (std::size_t r = 0; r < kern.v.size(); ++r)
        ASSERT_LE(std::fabs(kern.v[r] - host.v[r]), 1e-6f * std::max(1.0f, vmax)) << "v[" << r << "]";
      RecordProperty(std::string("bit_identical_alpha_sigma") + (sigma == 1.0 ? "1" : "2"), std::to_string(exact));
      // (2) the core's reference epoch in double (the same order): float32 rounding only.
      std::vector<double> alpha(static_cast<std::size_t>(form.n_coords()), 0.0), v(static_cast<std::size_t>(form.dim()), 0.0);
      for (int e = 0; e < epochs; ++e) reference_epoch(form, ws, alpha, v, 11, e, sigma);
      double ram = 0, rvm = 0;
      for (double a : alpha) ram = std::max(ram, std::fabs(a));
      for (double x : v) rvm = std::max(rvm, std::fabs(x));
      for (std::size_t p = 0; p < ws.size(); ++p)
        ASSERT_LE(std::fabs(double(kern.alpha[p]) - alpha[ws[p]]), 2e-4 * std::max(1.0, ram)) << "alpha at " << p;
      for (std::size_t r = 0; r < v.size(); ++r)
        ASSERT_LE(std::fabs(double(kern.v[r]) - v[r]), 2e-4 * std::max(1.0, rvm)) << "v[" << r << "]";
    }
  });
}

INSTANTIATE_TEST_SUITE_P(EveryFormulation, CSim, ::testing::ValuesIn(kEpochModels),
                         [](const auto& info) { return info.param.name(); });

TEST(CSimLimits, SizesOverTheKernelMaximaAreRefusedAndChangeNothing) {
  Packed k;
  k.v.assign(4, 1.0f);
  k.alpha.assign(1, 0.5f);
  k.val.assign(1, 1.0f);
  k.idx.assign(1, 0);
  k.ptr = {0, 1};
  k.coord.assign(4, 1.0f);
  k.row.assign(2, 0.0f);
  k.order.assign(1, 0);
  k.s = abi::Scalars{1, abi::kMaxDim + 1, 1, HETGLM_FORM_DUAL, HETGLM_LOSS_SQUARED, 0, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f};
  run_kernel(k);
  EXPECT_EQ(k.status[abi::kStatusError], abi::kErrDimTooLarge);
  k.s.dim = 4;
  k.s.ws = abi::kMaxCoords + 1;
  run_kernel(k);
  EXPECT_EQ(k.status[abi::kStatusError], abi::kErrTooManyCoords);
  EXPECT_EQ(k.alpha[0], 0.5f);
  EXPECT_EQ(k.v[0], 1.0f);
}

}  // namespace
}  // namespace hetglm::testing
