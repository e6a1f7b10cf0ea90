// SPDX-License-Identifier: Apache-2.0
// The cpu stand-in accelerator: the sequential coordinate epoch (glm_math.h, the same math as DualForm and
// PrimalForm) over the resident coordinates, with a configurable memory budget so that it plays a
// limited-memory accelerator in tests and benchmarks, and an optional emulated host<->device link that charges
// every copy bytes / bandwidth of wall time (sleeping, so no core is burned: a DMA engine does not use the CPU).
// Precision: double (default; reaches the sequential reference within 1e-6) or float (like the accelerators).
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <unordered_map>

#include "hetglm/backends/registry.hpp"
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
    auto copy = [](const double* p, std::size_t n) {
      return p ? std::vector<T>(p, p + n) : std::vector<T>(n, T(0));
    };
    const auto nc = static_cast<std::size_t>(d.n_coords), dim = static_cast<std::size_t>(d.dim);
    labels_ = copy(d.coord_labels, nc);
    weights_ = d.coord_weights ? copy(d.coord_weights, nc) : std::vector<T>(nc, T(1));
    curv_ = copy(d.coord_curvature, nc);
    if (d.formulation == HETGLM_FORM_PRIMAL) {
      row_labels_ = copy(d.row_labels, dim);
      row_weights_ = d.row_weights ? copy(d.row_weights, dim) : std::vector<T>(dim, T(1));
    }
    v_.assign(dim, T(0));
    resident_.clear();
    ws_.clear();
    cols_.clear();
    alpha_.clear();
  }

  LoadReport load_working_set(std::span<const index_t> coords, const CsrMatrix& A,
                              std::span<const double> alpha_ws) override {
    const auto t0 = Clock::now();
    check_working_set_budget(coords, A, budget_);
    std::unordered_map<index_t, Column> next;
    next.reserve(coords.size());
    LoadReport rep;
    for (index_t i : coords) {
      auto it = resident_.find(i);
      if (it != resident_.end()) {
        next.emplace(i, std::move(it->second));
        continue;
      }
      Column c;
      c.idx.assign(A.indices.begin() + A.offsets[i], A.indices.begin() + A.offsets[i + 1]);
      c.val.assign(A.values.begin() + A.offsets[i], A.values.begin() + A.offsets[i + 1]);
      next.emplace(i, std::move(c));
      ++rep.columns_copied;
      rep.bytes_copied += column_bytes(A, i);
    }
    resident_ = std::move(next);
    ws_.assign(coords.begin(), coords.end());
    cols_.resize(ws_.size());
    for (std::size_t p = 0; p < ws_.size(); ++p) cols_[p] = &resident_.at(ws_[p]);
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
    const bool dual = d_.formulation == HETGLM_FORM_DUAL;
    const T inv_ln = T(1.0 / (d_.lambda * double(d_.n))), inv_n = T(1.0 / double(d_.n));
    const T lam = T(d_.lambda), eta = T(d_.eta), bound = T(d_.bound);
    for (int e = 0; e < epochs; ++e) {
      const std::vector<std::int32_t> order = epoch_order(ws_.size(), seed, e);
      for (std::int32_t p : order) {
        const index_t i = ws_[static_cast<std::size_t>(p)];
        const Column& c = *cols_[static_cast<std::size_t>(p)];
        const T a = alpha_[static_cast<std::size_t>(p)];
        T an;
        if (dual) {
          T dot = 0;
          for (std::size_t k = 0; k < c.idx.size(); ++k) dot += c.val[k] * v_[c.idx[k]];
          an = math::dual_step(d_.loss, labels_[i], a, dot * inv_ln, s * curv_[i], weights_[i]);
        } else {
          T u = 0;
          for (std::size_t k = 0; k < c.idx.size(); ++k) {
            const index_t r = c.idx[k];
            u += c.val[k] * math::loss_derivative(d_.loss, row_labels_[r], v_[r], row_weights_[r]);
          }
          an = math::penalty_step(d_.penalty, a, u * inv_n, s * curv_[i], lam, eta, bound);
        }
        ++rep.updates;
        if (!std::isfinite(double(an))) rep.numerics_ok = false;
        const T delta = an - a;
        if (delta == T(0)) continue;
        alpha_[static_cast<std::size_t>(p)] = an;
        const T sd = s * delta;
        for (std::size_t k = 0; k < c.idx.size(); ++k) v_[c.idx[k]] += sd * c.val[k];
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
    const bool dual = d_.formulation == HETGLM_FORM_DUAL;
    const double inv_ln = 1.0 / (d_.lambda * double(d_.n)), inv_n = 1.0 / double(d_.n);
    for (std::size_t p = 0; p < ws_.size() && p < out.size(); ++p) {
      const index_t i = ws_[p];
      const Column& c = *cols_[p];
      const double a = alpha_[p];
      double u = 0;
      if (dual) {
        for (std::size_t k = 0; k < c.idx.size(); ++k) u += double(c.val[k]) * double(v_[c.idx[k]]);
        out[p] = math::dual_gap(d_.loss, double(labels_[i]), a, u * inv_ln, double(weights_[i])) * inv_n;
      } else {
        for (std::size_t k = 0; k < c.idx.size(); ++k) {
          const index_t r = c.idx[k];
          u += double(c.val[k]) *
               math::loss_derivative(d_.loss, double(row_labels_[r]), double(v_[r]), double(row_weights_[r]));
        }
        out[p] = math::primal_gap(d_.penalty, a, u * inv_n, d_.lambda, d_.eta, d_.bound);
      }
    }
    return true;
  }

 private:
  struct Column {
    std::vector<index_t> idx;
    std::vector<T> val;
  };

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
  std::vector<T> labels_, weights_, curv_, row_labels_, row_weights_, v_, alpha_;
  std::unordered_map<index_t, Column> resident_;
  std::vector<index_t> ws_;
  std::vector<const Column*> cols_;
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
