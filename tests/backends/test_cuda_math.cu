// SPDX-License-Identifier: Apache-2.0
// The single copy of the loss math (glm_math.h) compiled by nvcc: every function runs inside a kernel over a grid
// of inputs and is compared with the same function on the host (within a few ulps: the device's log/exp/log1p
// are not the host libm's, and nvcc contracts a*b+c into FMA on the device). Skipped without a GPU. The host part
// always runs: the nvcc-compiled host versions are finite and consistent (float vs double, gaps >= 0, steps
// within their domains). No formula is written here: all values come from glm_math.h.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "hetglm/glm_math.h"

namespace {

constexpr int kFns = 8;  // value, derivative, conjugate, dual_step, dual_gap, penalty_step, primal_gap, penalty_conj

struct Input {
  int loss, pen;
  double y, z, a, c, q, w, s, h, lambda, eta, bound;
};

std::vector<Input> inputs() {
  std::vector<Input> in;
  const double zs[] = {-3.0, -0.7, 0.0, 0.4, 1.0, 2.5};
  const double as[] = {0.0, 0.3, 0.9};
  for (int loss = 0; loss < 4; ++loss)
    for (double y : {-1.0, 1.0})
      for (double z : zs)
        for (double b : as) {
          const double a = loss == HETGLM_LOSS_SQUARED ? b - 0.5 : y * b;  // feasible dual point (b = y a)
          const int pen = static_cast<int>(in.size() % 3);
          in.push_back({loss, pen, y, z, a, 1.0, 0.8, z * 0.3, b - 0.4, 0.7, 0.05, pen == 2 ? 0.5 : 1.0, 3.0});
        }
  return in;
}

// float and double evaluations, shared by host and device code.
#define HETGLM_EVAL_ALL(SFX, R, x, out)                                                                       \
  do {                                                                                                       \
    out[0] = hetglm_loss_value##SFX(x.loss, (R)x.y, (R)x.z, (R)x.c);                                        \
    out[1] = hetglm_loss_derivative##SFX(x.loss, (R)x.y, (R)x.z, (R)x.c);                                   \
    out[2] = hetglm_loss_conjugate##SFX(x.loss, (R)x.y, (R)x.a, (R)x.c);                                    \
    out[3] = hetglm_dual_step##SFX(x.loss, (R)x.y, (R)x.a, (R)x.z, (R)x.q, (R)x.c);                         \
    out[4] = hetglm_dual_gap##SFX(x.loss, (R)x.y, (R)x.a, (R)x.z, (R)x.c);                                  \
    out[5] = hetglm_penalty_step##SFX(x.pen, (R)x.w, (R)x.s, (R)x.h, (R)x.lambda, (R)x.eta, (R)x.bound);    \
    out[6] = hetglm_primal_gap##SFX(x.pen, (R)x.w, (R)x.s, (R)x.lambda, (R)x.eta, (R)x.bound);              \
    out[7] = hetglm_penalty_conjugate##SFX(x.pen, (R)x.s, (R)x.lambda, (R)x.eta, (R)x.bound);               \
  } while (0)

__global__ void eval_kernel(const Input* in, int n, float* outf, double* outd) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const Input x = in[t];
  HETGLM_EVAL_ALL(_f, float, x, (outf + kFns * t));
  HETGLM_EVAL_ALL(_d, double, x, (outd + kFns * t));
}

void eval_host(const std::vector<Input>& in, std::vector<float>& f, std::vector<double>& d) {
  f.assign(in.size() * kFns, 0.0f);
  d.assign(in.size() * kFns, 0.0);
  for (std::size_t t = 0; t < in.size(); ++t) {
    const Input& x = in[t];
    float* of = f.data() + kFns * t;
    double* od = d.data() + kFns * t;
    HETGLM_EVAL_ALL(_f, float, x, of);
    HETGLM_EVAL_ALL(_d, double, x, od);
  }
}

/// Distance in units in the last place of `ref` (0 when both are equal, including equal infinities).
template <class R>
double ulps(R got, R ref) {
  if (got == ref) return 0.0;
  if (!std::isfinite(got) || !std::isfinite(ref)) return 1e30;
  const R spacing = std::nextafter(std::fabs(ref), (R)INFINITY) - std::fabs(ref);
  return std::fabs(double(got) - double(ref)) / double(spacing);
}

std::string no_gpu_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  }
  return n > 0 ? std::string() : std::string("cudaGetDeviceCount found no device");
}

#define CHECK_CUDA(call) ASSERT_EQ(cudaSuccess, (call)) << #call << ": " << cudaGetErrorString(cudaGetLastError())

TEST(CudaMath, HostVersionsAreFiniteAndConsistent) {
  const auto in = inputs();
  std::vector<float> f;
  std::vector<double> d;
  eval_host(in, f, d);
  for (std::size_t t = 0; t < in.size(); ++t) {
    for (int k = 0; k < kFns; ++k) {
      const double rd = d[kFns * t + k];
      const float rf = f[kFns * t + k];
      if (k == 2 && !std::isfinite(rd)) continue;  // the conjugate is +inf outside its domain
      ASSERT_TRUE(std::isfinite(rd)) << "input " << t << " function " << k;
      ASSERT_TRUE(std::isfinite(rf)) << "input " << t << " function " << k;
      EXPECT_NEAR(rf, rd, 1e-4 * std::max(1.0, std::fabs(rd))) << "input " << t << " function " << k;
    }
    EXPECT_GE(d[kFns * t + 4], -1e-12) << "dual gap term of input " << t;
    EXPECT_GE(d[kFns * t + 6], -1e-12) << "primal gap term of input " << t;
    // The dual step stays in the domain: its conjugate is finite.
    const Input& x = in[t];
    EXPECT_TRUE(std::isfinite(hetglm_loss_conjugate_d(x.loss, x.y, d[kFns * t + 3], x.c))) << "input " << t;
    // The prox step respects the Lipschitzing bound.
    EXPECT_LE(std::fabs(d[kFns * t + 5]), x.bound + 1e-12);
  }
}

TEST(CudaMath, KernelMatchesHostWithinUlps) {
  const std::string why = no_gpu_reason();
  if (!why.empty()) GTEST_SKIP() << "no CUDA device is present: " << why;
  const auto in = inputs();
  const int n = static_cast<int>(in.size());
  std::vector<float> hf, df(in.size() * kFns, std::nanf(""));
  std::vector<double> hd, dd(in.size() * kFns, std::nan(""));
  eval_host(in, hf, hd);
  Input* din = nullptr;
  float* dout_f = nullptr;
  double* dout_d = nullptr;
  CHECK_CUDA(cudaMalloc(&din, in.size() * sizeof(Input)));
  CHECK_CUDA(cudaMalloc(&dout_f, df.size() * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&dout_d, dd.size() * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(din, in.data(), in.size() * sizeof(Input), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dout_f, 0xff, df.size() * sizeof(float)));  // poison: NaN
  CHECK_CUDA(cudaMemset(dout_d, 0xff, dd.size() * sizeof(double)));
  eval_kernel<<<(n + 63) / 64, 64>>>(din, n, dout_f, dout_d);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
  CHECK_CUDA(cudaMemcpy(df.data(), dout_f, df.size() * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(dd.data(), dout_d, dd.size() * sizeof(double), cudaMemcpyDeviceToHost));
  cudaFree(din);
  cudaFree(dout_f);
  cudaFree(dout_d);
  double worst_f = 0, worst_d = 0;
  for (std::size_t k = 0; k < hf.size(); ++k) {
    // Newton-based steps (logistic) stop at a tolerance: compare them by that tolerance, the rest by ulps.
    const bool newton = (k % kFns == 3) && in[k / kFns].loss == HETGLM_LOSS_LOGISTIC;
    const double uf = ulps(df[k], hf[k]), ud = ulps(dd[k], hd[k]);
    if (newton) {
      EXPECT_NEAR(df[k], hf[k], 1e-5f * std::max(1.0f, std::fabs(hf[k]))) << "float, entry " << k;
      EXPECT_NEAR(dd[k], hd[k], 1e-12 * std::max(1.0, std::fabs(hd[k]))) << "double, entry " << k;
      continue;
    }
    worst_f = std::max(worst_f, uf);
    worst_d = std::max(worst_d, ud);
    // Near-cancellation results (gaps close to 0) are compared absolutely against the scale of the inputs.
    EXPECT_TRUE(uf <= 4 || std::fabs(df[k] - hf[k]) <= 4e-7f) << "float, entry " << k << ": " << df[k] << " vs " << hf[k];
    EXPECT_TRUE(ud <= 4 || std::fabs(dd[k] - hd[k]) <= 1e-15) << "double, entry " << k << ": " << dd[k] << " vs " << hd[k];
  }
  std::printf("glm_math.h on the device vs the host: worst %.0f ulp (float), %.0f ulp (double)\n", worst_f, worst_d);
}

}  // namespace
