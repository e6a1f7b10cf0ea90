// SPDX-License-Identifier: Apache-2.0
// The cpu stand-in accelerator: the sequential coordinate epoch over the resident coordinates (glm_math.h's
// coordinate kernel, the function DualForm, PrimalForm and every device call; columns in the shared ColumnPool), with a configurable memory budget so that it plays a
// limited-memory accelerator in tests and benchmarks, and an optional emulated host<->device link that charges
// every copy bytes / bandwidth of wall time (sleeping, so no core is burned: a DMA engine does not use the CPU).
// Precision: double (default; reaches the sequential reference within 1e-6) or float (like the accelerators).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "hetglm/backends/registry.hpp"
#include "hetglm/column_pool.hpp"
#include "hetglm/losses.hpp"

namespace hetglm {
namespace {

using Clock = std::chrono::steady_clock;

template <class T>
class CpuBackend final : public Backend {
 public:
  CpuBackend(std::size_t budget, double gbps) : budget_(budget ? budget : SIZE_MAX), gbps_(gbps) {}

  Device device() const noexcept override { return Device::cpu; }
  std::string description() const override {
    std::string s = fmt::format("cpu stand-in ({}", sizeof(T) == 8 ? "double" : "float");
    if (budget_ != SIZE_MAX) s += fmt::format(", budget {} bytes", budget_);
    if (gbps_ > 0) s += fmt::format(", emulated link {} GB/s", gbps_);
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
    v_.assign(dim, T(0));
    pool_.reset(0);
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
    for (std::size_t p = 0; p < alpha_.size() && p < out.size(); ++p) out[p] = alpha_[p];
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
  std::vector<T> labels_, weights_, curv_, row_labels_, row_weights_, v_, alpha_;
  ColumnPool pool_;
  std::vector<index_t> pool_idx_;
  std::vector<T> pool_val_;
  std::vector<index_t> ws_;
  std::vector<ColumnPool::Range> slots_;
};

}  // namespace

namespace detail {
std::unique_ptr<Backend> make_cpu_backend(const BackendOptions& o) {
  if (!(o.link_bandwidth_gbps >= 0 && std::isfinite(o.link_bandwidth_gbps)))
    throw InvalidArgument(fmt::format("--link-bandwidth: must be a non-negative number of GB/s, got {}", o.link_bandwidth_gbps));
  if (o.cpu_precision == "double") return std::make_unique<CpuBackend<double>>(o.memory_budget, o.link_bandwidth_gbps);
  if (o.cpu_precision == "float") return std::make_unique<CpuBackend<float>>(o.memory_budget, o.link_bandwidth_gbps);
  throw InvalidArgument(fmt::format("cpu backend precision: unknown value '{}' (expected double or float)", o.cpu_precision));
}
}  // namespace detail

}  // namespace hetglm
