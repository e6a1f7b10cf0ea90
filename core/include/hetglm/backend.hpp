// SPDX-License-Identifier: Apache-2.0
// The accelerator interface: coarse device operations that the DuHL scheduler (solvers/duhl.hpp) drives on
// every device (cpu stand-in, OpenCL, CUDA, FPGA). Dünner, Parnell & Jaggi, "Efficient Use of Limited-Memory
// Accelerators for Linear Learning on Heterogeneous Systems", NeurIPS 2017: unit B holds the columns A_P of a
// working set P, alpha_P and its own copy of the shared vector v, and runs coordinate descent on P.
//
// Problem (docs/algorithms.md, "The primal-dual form"):  min_alpha f(A alpha) + sum_i g_i(alpha_i),  shared vector v = A alpha.
//   Coordinates are the rows of the host matrix `A` passed to load_working_set (dual: samples, A = X;
//   primal: features, A = X^T). The math of one coordinate is glm_math.h (the single copy):
//   dual   (SDCA)  u_i = (x_i . v) / (lambda n);  a' = hetglm_dual_step(loss, y_i, a, u_i, sigma' q_i, c_i),
//                  q_i = ||x_i||^2 / (lambda n) (given per coordinate as `curvature`);
//   primal (CD)    s_j = (1/n) sum_k x_kj phi_k'(v_k) with phi_k' = hetglm_loss_derivative(loss, y_k, v_k, c_k);
//                  w' = hetglm_penalty_step(pen, w, s_j, sigma' H_j, lambda, eta, B), H_j given as `curvature`.
//   After each step the device's own v moves by sigma' (a' - a) a_i (CoCoA+ local copy, Ma et al. ICML 2015;
//   sigma' = 1 is the plain sequential epoch).
// Gaps: dual (1/n) hetglm_dual_gap(loss, y_i, a, u_i, c_i); primal hetglm_primal_gap(pen, w, s_j, lambda, eta, B).
//
// Precision: the interface is in double; each device stores what it documents (the cpu backend double or float,
// OpenCL and CUDA float32). The host re-synchronizes v from alpha in double at every DuHL round and computes every
// certificate in double.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hetglm/error.hpp"
#include "hetglm/losses.hpp"
#include "hetglm/matrix.hpp"
#include "hetglm/rng.hpp"

namespace hetglm {

/// Device kinds (docs/conventions.md, "Devices"): cpu | opencl | cuda | fpga (XRT) | fpga-sim (HLS kernel as C++).
enum class Device { cpu, opencl, cuda, fpga, fpga_sim };

/// "cpu" | "opencl" | "cuda" | "fpga" | "fpga-sim".
inline const char* device_name(Device d) {
  switch (d) {
    case Device::cpu: return "cpu";
    case Device::opencl: return "opencl";
    case Device::cuda: return "cuda";
    case Device::fpga: return "fpga";
    default: return "fpga-sim";
  }
}

/// A device that is not compiled in or not present (CLI exit code 2, Python DeviceUnavailableError).
/// Wording: "device 'cuda' is not compiled in: reconfigure with -DHETGLM_ENABLE_CUDA=ON" or
/// "device 'cuda': no CUDA device is present".
class UnsupportedDevice : public Error {
 public:
  using Error::Error;
};

/// A device API call failed (OpenCL program build, out of device memory...). what() names the API call, its
/// status code and, for program builds, the build log.
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// Device-agnostic, plain description of the objective: the coordinate kernel's scalars (glm_math.h, in double; a
/// float32 device converts them with to_float) plus host pointers that the backend copies at bind().
struct ObjectiveDesc {
  Objective obj{};                      ///< formulation, loss, penalty, lambda, eta, bound, scale, inv_n
  std::int32_t n_coords = 0;            ///< number of coordinates (rows of the host matrix A)
  std::int32_t dim = 0;                 ///< length of the shared vector v (columns of A)
  /// Per coordinate, size n_coords: the curvature (dual q_i = ||x_i||^2/(lambda n), primal H_j); dual only: y_i and
  /// c_i (null in the primal).
  const double* coord_curvature = nullptr;
  const double* coord_labels = nullptr;
  const double* coord_weights = nullptr;
  /// Per entry of v, size dim (primal only; null in the dual): y_k and c_k of sample k.
  const double* row_labels = nullptr;
  const double* row_weights = nullptr;
  bool dual() const { return obj.formulation == HETGLM_FORM_DUAL; }
};

/// The kernel scalars in float32 (the accelerators' precision).
inline ObjectiveF to_float(const Objective& o) {
  return hetglm_objective_make_f(o.formulation, o.loss, o.penalty, float(o.lambda), float(o.eta), float(o.bound),
                                 float(o.inv_n), float(o.scale));
}

/// Bytes the device format needs per resident coordinate besides its nonzeros (offset, length, alpha, label,
/// weight, curvature), and per nonzero (float value + int32 index). Used for budgets on every device.
inline constexpr std::size_t kBytesPerNonzero = sizeof(float) + sizeof(std::int32_t);
inline constexpr std::size_t kBytesPerCoordinate = 32;
/// Bytes of coordinate i (row i of the host matrix) in the device format.
inline std::size_t column_bytes(const CsrMatrix& A, index_t i) {
  return static_cast<std::size_t>(A.offsets[i + 1] - A.offsets[i]) * kBytesPerNonzero + kBytesPerCoordinate;
}

/// The check every Backend::load_working_set makes before copying anything: the column_bytes of `coords` must fit
/// `budget`, else InvalidArgument "working set of N bytes exceeds the accelerator budget of B bytes".
inline void check_working_set_budget(std::span<const index_t> coords, const CsrMatrix& A, std::size_t budget) {
  std::size_t need = 0;
  for (index_t i : coords) need += column_bytes(A, i);
  if (need > budget)
    throw InvalidArgument("working set of " + std::to_string(need) + " bytes exceeds the accelerator budget of " +
                          std::to_string(budget) + " bytes");
}

/// The host's double alpha_i after a float32 device's epochs, from the double value `a0` the host loaded, the
/// device's copy of it `a0_dev` (float(a0)) and the device's result `a_dev`: the device's CHANGE is added to the
/// double value (a0 + (a_dev - a0_dev), exact in double), so alpha is never rounded through float across rounds
/// (which limited certificates to about 1e-7). A coordinate the device left alone keeps a0 exactly; a result on an
/// edge of the coordinate's domain snaps to the double edge: 0, and +-`edge` (dual: the weight c_i, the box of
/// hinge, logistic and Huber; primal: the Lipschitzing bound B; 0 = none), so the double alpha stays feasible.
inline double device_alpha_to_host(double a0, float a0_dev, float a_dev, double edge) {
  if (a_dev == a0_dev) return a0;
  if (a_dev == 0.0f) return 0.0;
  if (edge > 0) {
    const auto ef = static_cast<float>(edge);
    if (a_dev == ef) return edge;
    if (a_dev == -ef) return -edge;
  }
  return a0 + (static_cast<double>(a_dev) - static_cast<double>(a0_dev));
}

/// The `edge` of device_alpha_to_host for a coordinate of weight c_i: dual losses with a box (hinge, logistic,
/// Huber: |alpha_i| <= c_i) c_i; the squared and squared-hinge duals have no upper edge (0); primal penalties with an
/// L1 part the bound B; L2 0.
inline double domain_edge(const Objective& o, double c_i) {
  if (o.formulation == HETGLM_FORM_DUAL)
    return (o.loss == HETGLM_LOSS_SQUARED || o.loss == HETGLM_LOSS_SQUARED_HINGE) ? 0.0 : c_i;
  return o.penalty == HETGLM_PENALTY_L2 ? 0.0 : o.bound;
}

/// What load_working_set moved.
struct LoadReport {
  std::size_t columns_copied = 0;  ///< "swaps": coordinates that were not resident before
  std::size_t bytes_copied = 0;    ///< host-to-device bytes (columns + per-coordinate data)
  double seconds = 0;              ///< wall time, including emulated link time
};

/// What run_epochs did.
struct EpochReport {
  int epochs = 0;
  double seconds = 0;
  std::size_t updates = 0;   ///< coordinate steps taken
  bool numerics_ok = true;   ///< false if a NaN/inf was seen on the device
};

/// An accelerator with limited memory. Not thread-safe: one host thread drives it (the DuHL scheduler calls it
/// from its accelerator thread while the CPU refreshes gaps). Every call may throw DeviceError.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const noexcept = 0;
  /// Human-readable: "cpu stand-in (double, budget 1.2 MB, link 16 GB/s)", "Portable CL: cpu-... (opencl)".
  virtual std::string description() const = 0;
  /// Bytes available for resident coordinates (column_bytes of each), after the user's budget and the device's
  /// own memory; the shared vector and scratch are allocated besides this.
  virtual std::size_t memory_budget() const noexcept = 0;

  /// Bind an objective; drops every resident coordinate. The pointed-to arrays are copied.
  virtual void bind(const ObjectiveDesc& objective) = 0;
  /// Make `coords` (indices into the rows of the host matrix `A`, distinct) the working set, in this order;
  /// copies only the rows that are not already resident, and sets alpha of every working-set coordinate to
  /// alpha_ws (same order). Throws InvalidArgument if their column_bytes exceed memory_budget().
  virtual LoadReport load_working_set(std::span<const index_t> coords, const CsrMatrix& A,
                                      std::span<const double> alpha_ws) = 0;
  /// Replace the device's shared vector (size dim), e.g. with the host's v = A alpha.
  virtual void set_shared_vector(std::span<const double> v) = 0;
  /// `epochs` passes over the working set. Pass e visits the working-set positions in the order of
  /// epoch_order(size, seed, e) (every device must use this order or document why not, e.g. asynchronous
  /// kernels); sigma' scales the curvature and the local v update (1 = sequential, 2 = CoCoA+ with the CPU).
  virtual EpochReport run_epochs(int epochs, std::uint64_t seed, double sigma) = 0;
  /// alpha of the working set, in working-set order (size = coords.size()).
  virtual void get_alpha(std::span<double> alpha_ws) const = 0;
  /// The device's shared vector (size dim).
  virtual void get_shared_vector(std::span<double> v) const = 0;
  /// Fresh gaps of the working set against the device's v, in working-set order, scaled so they sum to the
  /// total gap. Returns false if the device does not compute them (the host then does).
  virtual bool coordinate_gaps(std::span<double> /*gaps_ws*/) const { return false; }
};

/// The visiting order of pass `epoch` over a working set of `size` positions: a Fisher-Yates shuffle of 0..size-1
/// driven by splitmix64(seed + epoch) (rng.hpp). Shared by the backends and the conformance test's reference epoch.
inline std::vector<std::int32_t> epoch_order(std::size_t size, std::uint64_t seed, int epoch) {
  std::vector<std::int32_t> order(size);
  for (std::size_t i = 0; i < size; ++i) order[i] = static_cast<std::int32_t>(i);
  SplitMix64 rng(seed + static_cast<std::uint64_t>(epoch));
  shuffle(std::span<std::int32_t>(order), rng);
  return order;
}

}  // namespace hetglm
