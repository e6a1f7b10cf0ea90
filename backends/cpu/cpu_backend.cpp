// SPDX-License-Identifier: Apache-2.0
// The cpu stand-in accelerator: the sequential coordinate epoch over the resident coordinates (glm_math.h's
// coordinate kernel, the function DualForm, PrimalForm and every device call; columns in the shared ColumnPool), with a configurable memory budget so that it plays a
// limited-memory accelerator in tests and benchmarks, and an optional emulated host<->device link that charges
// every copy bytes / bandwidth of wall time (sleeping, so no core is burned: a DMA engine does not use the CPU).
// Precision: double (default; reaches the sequential reference within 1e-6) or float (like the accelerators; the
// host's alpha stays double: get_alpha adds the device's change, backend.hpp device_alpha_to_host).
// Schedule: the sequential epoch (default), or with BackendOptions::tpa_concurrency = N the host emulation of the
// CUDA kernel's TPA-SCD wave schedule (tpa_schedule.hpp): the epoch's order cut into waves, every coordinate of a
// wave stepping from the same v with the curvature scaled by sigma' x sigma'_wave, then all of them adding their
// updates (scaled by sigma' only), exactly as backends/cuda/src/tpa_scd.cuh's wave kernel does.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "hetglm/backends/registry.hpp"
#include "hetglm/column_pool.hpp"
#include "hetglm/losses.hpp"
#include "hetglm/tpa_schedule.hpp"

namespace hetglm {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
class CpuBackend final : public Backend {
 public:
  CpuBackend(std::size_t budget, double gbps, long tpa_concurrency, bool tpa_safeguard)
      : budget_(budget ? budget : SIZE_MAX), gbps_(gbps) {
    tpa_.concurrency = tpa_concurrency;
    tpa_.safeguard = tpa_safeguard;
  }

  Device device() const noexcept override { return Device::cpu; }
  std::string description() const override {
    std::string s = fmt::format("cpu stand-in ({}", sizeof(T) == 8 ? "double" : "float");
    if (budget_ != SIZE_MAX) s += fmt::format(", budget {} bytes", budget_);
    if (gbps_ > 0) s += fmt::format(", emulated link {} GB/s", gbps_);
    if (tpa_.concurrency > 0)
      s += fmt::format(", TPA-SCD wave emulation at {} in flight{}{}", tpa_.concurrency,
                       tpa_.safeguard ? "" : " unsafeguarded",
                       planned_size_ != SIZE_MAX ? ": " + schedule_.describe() : std::string());
    return s + ")";
  }
  std::size_t memory_budget() const noexcept override { return budget_; }

  void bind(const ObjectiveDesc& d) override {
    d_ = d;
    obj_ = math::make_objective<T>(d.obj.formulation, d.obj.loss, d.obj.penalty, T(d.obj.lambda), T(d.obj.eta),
                                   T(d.obj.bound), T(d.obj.inv_n), T(d.obj.scale));
    auto copy = [](const double* p, std::size_t n, T fill) {
      return p ? std::vector<T>(p, p + n) : std::vector<T>(n, fill);
    };
    const auto nc = static_cast<std::size_t>(d.n_coords), dim = static_cast<std::size_t>(d.dim);
    labels_ = copy(d.coord_labels, nc, T(0));
    weights_ = copy(d.coord_weights, nc, T(1));
    curv_ = copy(d.coord_curvature, nc, T(0));
    row_labels_ = copy(d.row_labels, d.dual() ? 0 : dim, T(0));
    row_weights_ = copy(d.row_weights, d.dual() ? 0 : dim, T(1));
    coord_weights_d_ = d.coord_weights ? std::vector<double>(d.coord_weights, d.coord_weights + nc) : std::vector<double>(nc, 1.0);
    row_weights_d_ = d.row_weights && !d.dual() ? std::vector<double>(d.row_weights, d.row_weights + dim) : std::vector<double>{};
    v_.assign(dim, T(0));
    pool_.reset(0);
    planned_size_ = SIZE_MAX;
    ws_.clear();
    slots_.clear();
    alpha_.clear();
  }

  LoadReport load_working_set(std::span<const index_t> coords, const CsrMatrix& A,
                              std::span<const double> alpha_ws) override {
    const auto t0 = Clock::now();
    check_working_set_budget(coords, A, budget_);
    if (pool_.capacity() == 0 && A.nnz() > 0) {  // the "device memory": the largest working set the budget allows
      const auto cap = static_cast<std::int64_t>(std::min<std::size_t>(std::size_t(A.nnz()), budget_ / kBytesPerNonzero));
      pool_.reset(cap);
      pool_idx_.assign(static_cast<std::size_t>(cap), 0);
      pool_val_.assign(static_cast<std::size_t>(cap), T(0));
    }
    const ColumnPool::Plan plan = pool_.place(coords, A);
    ColumnPool::copy_to_slots(plan, coords, A, pool_idx_.data(), pool_val_.data());
    LoadReport rep;
    for (std::size_t p : plan.fresh) {
      ++rep.columns_copied;
      rep.bytes_copied += column_bytes(A, coords[p]);
    }
    ws_.assign(coords.begin(), coords.end());
    slots_ = plan.slots;
    alpha_.assign(alpha_ws.begin(), alpha_ws.end());
    alpha0_.assign(alpha_ws.begin(), alpha_ws.end());
    alpha0_dev_ = alpha_;
    // The wave schedule of this working set (the CUDA backend's rule): planned again only when the set changed.
    if (tpa_.concurrency > 0 && (!plan.fresh.empty() || planned_size_ != coords.size())) {
      schedule_ = tpa::plan(A, coords, row_weights_d_.empty() ? nullptr : row_weights_d_.data(), tpa_);
      planned_size_ = coords.size();
    }
    rep.bytes_copied += alpha_ws.size() * sizeof(T);
    charge(rep.bytes_copied);
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  void set_shared_vector(std::span<const double> v) override {
    v_.assign(v.begin(), v.end());
    charge(v.size() * sizeof(T));
  }

  EpochReport run_epochs(int epochs, std::uint64_t seed, double sigma) override {
    const auto t0 = Clock::now();
    EpochReport rep;
    const T s = static_cast<T>(sigma);
    if (tpa_.concurrency > 0) return run_waves(epochs, seed, sigma, t0);
    for (int e = 0; e < epochs; ++e) {
      const std::vector<std::int32_t> order = epoch_order(ws_.size(), seed, e);
      for (std::int32_t p : order) {
        const auto pz = static_cast<std::size_t>(p);
        const index_t i = ws_[pz];
        const T a = alpha_[pz];
        // The coordinate kernel (glm_math.h) from the column's inner product with v.
        const T an = math::coordinate_step(obj_, a, inner(pz), curv_[i], labels_[i], weights_[i], s);
        ++rep.updates;
        if (!std::isfinite(double(an))) rep.numerics_ok = false;
        const T delta = an - a;
        if (delta == T(0)) continue;
        alpha_[pz] = an;
        const T sd = s * delta;
        const ColumnPool::Range& r = slots_[pz];
        for (std::int64_t k = r.offset; k < r.offset + r.len; ++k) v_[pool_idx_[k]] += sd * pool_val_[k];
      }
      ++rep.epochs;
    }
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  void get_alpha(std::span<double> out) const override {
    for (std::size_t p = 0; p < alpha_.size() && p < out.size(); ++p) {
      if constexpr (sizeof(T) == sizeof(double)) {
        out[p] = alpha_[p];
      } else {
        out[p] = device_alpha_to_host(alpha0_[p], alpha0_dev_[p], alpha_[p],
                                      domain_edge(d_.obj, coord_weights_d_[static_cast<std::size_t>(ws_[p])]));
      }
    }
    charge(alpha_.size() * sizeof(T));
  }
  void get_shared_vector(std::span<double> out) const override {
    for (std::size_t k = 0; k < v_.size() && k < out.size(); ++k) out[k] = v_[k];
    charge(v_.size() * sizeof(T));
  }
  bool coordinate_gaps(std::span<double> out) const override {
    for (std::size_t p = 0; p < ws_.size() && p < out.size(); ++p) {
      const index_t i = ws_[p];
      out[p] = double(math::coordinate_gap(obj_, alpha_[p], inner(p), labels_[i], weights_[i]));
    }
    return true;
  }

 private:
  /// The TPA-SCD wave schedule (tpa_schedule.hpp) over epoch_order: per wave, every position steps from the same v
  /// (curvature x sigma' x sigma'_wave), then all updates land (x sigma'). The CUDA backend visits the same order
  /// except in the first epoch after a swap, where resident positions go first (docs/cuda.md).
  EpochReport run_waves(int epochs, std::uint64_t seed, double sigma, Clock::time_point t0) {
    EpochReport rep;
    const T s = static_cast<T>(sigma), sc = static_cast<T>(sigma * schedule_.sigma);
    const auto wave = static_cast<std::size_t>(std::max<std::int64_t>(1, schedule_.wave));
    std::vector<T> delta(wave);
    for (int e = 0; e < epochs; ++e) {
      const std::vector<std::int32_t> order = epoch_order(ws_.size(), seed, e);
      for (std::size_t w0 = 0; w0 < order.size(); w0 += wave) {
        const std::size_t w1 = std::min(order.size(), w0 + wave);
        for (std::size_t t = w0; t < w1; ++t) {  // read phase: every step sees the v of the previous wave
          const auto pz = static_cast<std::size_t>(order[t]);
          const index_t i = ws_[pz];
          const T a = alpha_[pz];
          const T an = math::coordinate_step(obj_, a, inner(pz), curv_[i], labels_[i], weights_[i], sc);
          ++rep.updates;
          if (!std::isfinite(double(an))) rep.numerics_ok = false;
          delta[t - w0] = an - a;
          alpha_[pz] = an;
        }
        for (std::size_t t = w0; t < w1; ++t) {  // write phase
          if (delta[t - w0] == T(0)) continue;
          const T sd = s * delta[t - w0];
          const ColumnPool::Range& r = slots_[static_cast<std::size_t>(order[t])];
          for (std::int64_t k = r.offset; k < r.offset + r.len; ++k) v_[pool_idx_[k]] += sd * pool_val_[k];
        }
      }
      ++rep.epochs;
    }
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  /// The raw inner product r of working-set position p's column with v (glm_math.h hetglm_shared_factor).
  T inner(std::size_t p) const {
    const ColumnPool::Range& r = slots_[p];
    T dot = 0;
    for (std::int64_t k = r.offset; k < r.offset + r.len; ++k) {
      const index_t q = pool_idx_[k];
      dot += pool_val_[k] * (d_.dual() ? v_[q] : math::shared_factor(obj_, v_[q], row_labels_[q], row_weights_[q]));
    }
    return dot;
  }

  /// Emulated link: owe bytes / bandwidth seconds and sleep once the debt exceeds 100 us (short sleeps overshoot).
  void charge(std::size_t bytes) const {
    if (gbps_ <= 0) return;
    debt_ += double(bytes) / (gbps_ * 1e9);
    if (debt_ < 1e-4) return;
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(std::chrono::duration<double>(debt_));
    debt_ -= std::chrono::duration<double>(Clock::now() - t0).count();
  }

  std::size_t budget_;
  double gbps_;
  mutable double debt_ = 0;
  ObjectiveDesc d_;
  ObjectiveT<T> obj_{};
  std::vector<T> labels_, weights_, curv_, row_labels_, row_weights_, v_, alpha_, alpha0_dev_;
  std::vector<double> alpha0_, coord_weights_d_, row_weights_d_;
  tpa::ScheduleOptions tpa_;
  tpa::Schedule schedule_;
  std::size_t planned_size_ = SIZE_MAX;
  ColumnPool pool_;
  std::vector<index_t> pool_idx_;
  std::vector<T> pool_val_;
  std::vector<index_t> ws_;
  std::vector<ColumnPool::Range> slots_;
};

}  // namespace

namespace detail {
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& o) {
  check_link_bandwidth(o.link_bandwidth_gbps);
  if (o.tpa_concurrency < 0)
    throw InvalidArgument(fmt::format("--tpa-concurrency: must be 0 (sequential epochs) or positive, got {}", o.tpa_concurrency));
  if (o.cpu_precision == "double")
    return std::make_unique<CpuBackend<double>>(o.memory_budget, o.link_bandwidth_gbps, o.tpa_concurrency, o.tpa_safeguard);
  if (o.cpu_precision == "float")
    return std::make_unique<CpuBackend<float>>(o.memory_budget, o.link_bandwidth_gbps, o.tpa_concurrency, o.tpa_safeguard);
  throw InvalidArgument(fmt::format("cpu backend precision: unknown value '{}' (expected double or float)", o.cpu_precision));
}
}  // namespace detail

}  // namespace hetglm
