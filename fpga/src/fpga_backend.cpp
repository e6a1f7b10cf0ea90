// SPDX-License-Identifier: Apache-2.0
// The FPGA Backend (backend.hpp) on top of an fpga::Device: `fpga` = XrtDevice with an xclbin, `fpga-sim` =
// SimDevice running the HLS kernel as C++. Both go through the same buffer packing and argument ABI
// (kernel_abi.hpp), so the sim tests the host control path that the card runs.
//
// Device state: a column pool (values, indices) holding the resident columns as contiguous ranges, placed by the
// shared ColumnPool (column_pool.hpp: only columns that are not resident travel, one write for a contiguous block);
// per working-set position col_ptr {offset, nnz}, coord {y, c, curvature, 0} and alpha; v; per row {y, c} (primal);
// the visiting order; status. Everything on the device is float32 (docs/conventions.md, "Precision"); the host
// re-synchronizes v in double.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "hetglm/fpga/factory.hpp"
#include "hetglm/column_pool.hpp"
#include "hetglm/fpga/device.hpp"

namespace hetglm {
namespace {

using Clock = std::chrono::steady_clock;
namespace abi = hls::abi;

class FpgaBackend final : public Backend {
 public:
  FpgaBackend(Device kind, std::unique_ptr<fpga::Device> dev, std::size_t budget)
      : kind_(kind), dev_(std::move(dev)) {
    budget_ = budget ? std::min(budget, dev_->memory_bytes()) : dev_->memory_bytes();
    status_ = dev_->alloc(abi::kStatusWords * sizeof(int), abi::kArgStatus);
  }

  Device device() const noexcept override { return kind_; }
  std::string description() const override {
    return fmt::format("{} (float32, budget {} bytes)", dev_->description(), budget_);
  }
  std::size_t memory_budget() const noexcept override { return budget_; }

  void bind(const ObjectiveDesc& d) override {
    if (d.dim > abi::kMaxDim)
      throw InvalidArgument(fmt::format(
          "device '{}': the shared vector has {} entries, more than the {} the FPGA kernel holds on chip (v tiling "
          "is not implemented yet: docs/fpga.md)",
          device_name(kind_), d.dim, abi::kMaxDim));
    d_ = d;
    const auto nc = static_cast<std::size_t>(d.n_coords), dim = static_cast<std::size_t>(d.dim);
    coord_.assign(nc * abi::kCoordWords, 0.0f);
    for (std::size_t i = 0; i < nc; ++i) {
      coord_[abi::kCoordWords * i] = d.coord_labels ? float(d.coord_labels[i]) : 0.0f;
      coord_[abi::kCoordWords * i + 1] = d.coord_weights ? float(d.coord_weights[i]) : 1.0f;
      coord_[abi::kCoordWords * i + 2] = d.coord_curvature ? float(d.coord_curvature[i]) : 0.0f;
    }
    std::vector<float> row(std::max<std::size_t>(dim, 1) * abi::kRowWords, 0.0f);
    if (!d.dual())
      for (std::size_t k = 0; k < dim; ++k) {
        row[abi::kRowWords * k] = d.row_labels ? float(d.row_labels[k]) : 0.0f;
        row[abi::kRowWords * k + 1] = d.row_weights ? float(d.row_weights[k]) : 1.0f;
      }
    ensure(v_, v_cap_, std::max<std::size_t>(dim, 1) * sizeof(float), abi::kArgV);
    ensure(row_, row_cap_, row.size() * sizeof(float), abi::kArgRow);
    dev_->write(row_, row.data(), row.size() * sizeof(float));
    std::vector<float> zero(dim, 0.0f);
    dev_->write(v_, zero.data(), zero.size() * sizeof(float));
    pool_.reset(0);
    pool_ready_ = false;
    ws_.clear();
    bound_ = true;
  }

  LoadReport load_working_set(std::span<const index_t> coords, const CsrMatrix& A,
                              std::span<const double> alpha_ws) override {
    const auto t0 = Clock::now();
    check_bound();
    check_working_set_budget(coords, A, budget_);
    if (coords.size() > static_cast<std::size_t>(abi::kMaxCoords))
      throw InvalidArgument(fmt::format("device '{}': a working set of {} coordinates is more than the {} the FPGA "
                                        "kernel holds on chip; give a smaller --accel-memory",
                                        device_name(kind_), coords.size(), abi::kMaxCoords));
    if (!pool_ready_) {  // the pool: the largest working set the budget allows
      const auto cap = static_cast<std::int64_t>(std::min<std::size_t>(std::size_t(A.nnz()), budget_ / kBytesPerNonzero));
      if (pool_val_ >= 0) dev_->free(pool_val_);
      if (pool_idx_ >= 0) dev_->free(pool_idx_);
      pool_val_ = dev_->alloc(static_cast<std::size_t>(std::max<std::int64_t>(cap, 1)) * sizeof(float), abi::kArgColVal);
      pool_idx_ = dev_->alloc(static_cast<std::size_t>(std::max<std::int64_t>(cap, 1)) * sizeof(int), abi::kArgColIdx);
      pool_.reset(cap);
      pool_ready_ = true;
    }
    const ColumnPool::Plan plan = pool_.place(coords, A);
    LoadReport rep;
    const std::size_t fresh_nnz = static_cast<std::size_t>(plan.fresh_nnz);
    std::vector<int> idx(fresh_nnz);
    std::vector<float> val(fresh_nnz);
    ColumnPool::stage(plan, coords, A, idx.data(), val.data());
    ColumnPool::for_each_copy(plan, [&](std::int64_t from, std::int64_t n, std::int64_t at) {
      const auto f = static_cast<std::size_t>(from), c = static_cast<std::size_t>(n), o = static_cast<std::size_t>(at);
      dev_->write(pool_val_, val.data() + f, c * sizeof(float), o * sizeof(float));
      dev_->write(pool_idx_, idx.data() + f, c * sizeof(int), o * sizeof(int));
    });
    rep.bytes_copied += fresh_nnz * kBytesPerNonzero;
    rep.columns_copied = plan.fresh.size();
    ws_.assign(coords.begin(), coords.end());
    // Per-position arrays.
    const std::size_t ws = ws_.size();
    std::vector<int> ptr(std::max<std::size_t>(ws, 1) * abi::kColPtrWords, 0);
    std::vector<float> coord(std::max<std::size_t>(ws, 1) * abi::kCoordWords, 0.0f);
    std::vector<float> alpha(std::max<std::size_t>(ws, 1), 0.0f);
    for (std::size_t p = 0; p < ws; ++p) {
      const ColumnPool::Range& s = plan.slots[p];
      ptr[2 * p] = static_cast<int>(s.offset);
      ptr[2 * p + 1] = static_cast<int>(s.len);
      std::copy_n(&coord_[abi::kCoordWords * static_cast<std::size_t>(ws_[p])], abi::kCoordWords, &coord[abi::kCoordWords * p]);
      alpha[p] = p < alpha_ws.size() ? float(alpha_ws[p]) : 0.0f;
    }
    ensure(col_ptr_, col_ptr_cap_, ptr.size() * sizeof(int), abi::kArgColPtr);
    ensure(coord_buf_, coord_cap_, coord.size() * sizeof(float), abi::kArgCoord);
    ensure(alpha_, alpha_cap_, alpha.size() * sizeof(float), abi::kArgAlpha);
    dev_->write(col_ptr_, ptr.data(), ptr.size() * sizeof(int));
    dev_->write(coord_buf_, coord.data(), coord.size() * sizeof(float));
    dev_->write(alpha_, alpha.data(), alpha.size() * sizeof(float));
    rep.bytes_copied += ws * (abi::kColPtrWords + abi::kCoordWords + 1) * 4;
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  void set_shared_vector(std::span<const double> v) override {
    check_bound();
    std::vector<float> f(static_cast<std::size_t>(d_.dim), 0.0f);
    for (std::size_t k = 0; k < f.size() && k < v.size(); ++k) f[k] = float(v[k]);
    dev_->write(v_, f.data(), f.size() * sizeof(float));
  }

  EpochReport run_epochs(int epochs, std::uint64_t seed, double sigma) override {
    const auto t0 = Clock::now();
    check_bound();
    EpochReport rep;
    const std::size_t ws = ws_.size();
    if (epochs <= 0 || ws == 0) return rep;
    std::vector<int> order(std::max<std::size_t>(ws * static_cast<std::size_t>(epochs), 1));
    for (int e = 0; e < epochs; ++e) {
      const std::vector<std::int32_t> o = epoch_order(ws, seed, e);
      std::copy(o.begin(), o.end(), order.begin() + static_cast<std::ptrdiff_t>(ws * static_cast<std::size_t>(e)));
    }
    ensure(order_, order_cap_, order.size() * sizeof(int), abi::kArgOrder);
    dev_->write(order_, order.data(), order.size() * sizeof(int));
    fpga::RunArgs a;
    a.buffers[abi::kArgColVal] = pool_val_;
    a.buffers[abi::kArgColIdx] = pool_idx_;
    a.buffers[abi::kArgColPtr] = col_ptr_;
    a.buffers[abi::kArgCoord] = coord_buf_;
    a.buffers[abi::kArgAlpha] = alpha_;
    a.buffers[abi::kArgV] = v_;
    a.buffers[abi::kArgRow] = row_;
    a.buffers[abi::kArgOrder] = order_;
    a.buffers[abi::kArgStatus] = status_;
    const ObjectiveF of = to_float(d_.obj);
    a.scalars.ws = static_cast<int>(ws);
    a.scalars.dim = d_.dim;
    a.scalars.epochs = epochs;
    a.scalars.formulation = of.formulation;
    a.scalars.loss = of.loss;
    a.scalars.penalty = of.penalty;
    a.scalars.scale = of.scale;
    a.scalars.sigma = float(sigma);
    a.scalars.lambda = of.lambda;
    a.scalars.eta = of.eta;
    a.scalars.bound = of.bound;
    dev_->run(a);
    dev_->wait();
    int status[abi::kStatusWords] = {0, 0, 0, 0};
    dev_->read(status_, status, sizeof status);
    if (status[abi::kStatusError] != abi::kErrNone)
      throw DeviceError(fmt::format("device '{}': kernel " HETGLM_FPGA_KERNEL_NAME " refused the call (error code {}: "
                                    "working set {} coordinates, dim {})",
                                    device_name(kind_), status[abi::kStatusError], ws, d_.dim));
    rep.epochs = epochs;
    rep.updates = static_cast<std::size_t>(status[abi::kStatusUpdates]);
    rep.numerics_ok = status[abi::kStatusNonFinite] == 0;
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  void get_alpha(std::span<double> out) const override {
    std::vector<float> f(std::max<std::size_t>(ws_.size(), 1));
    if (!ws_.empty()) dev_->read(alpha_, f.data(), ws_.size() * sizeof(float));
    for (std::size_t p = 0; p < ws_.size() && p < out.size(); ++p) out[p] = f[p];
  }
  void get_shared_vector(std::span<double> out) const override {
    std::vector<float> f(static_cast<std::size_t>(d_.dim));
    dev_->read(v_, f.data(), f.size() * sizeof(float));
    for (std::size_t k = 0; k < f.size() && k < out.size(); ++k) out[k] = f[k];
  }

 private:
  void check_bound() const {
    if (!bound_) throw InvalidArgument(fmt::format("device '{}': bind() an objective first", device_name(kind_)));
  }
  /// (Re)allocate buffer `b` for argument `arg` to hold at least `bytes` (grows geometrically).
  void ensure(fpga::BufferId& b, std::size_t& cap, std::size_t bytes, int arg) {
    if (b >= 0 && cap >= bytes) return;
    if (b >= 0) dev_->free(b);
    cap = std::max(bytes, cap * 2);
    b = dev_->alloc(cap, arg);
  }
  Device kind_;
  std::unique_ptr<fpga::Device> dev_;
  std::size_t budget_ = 0;
  ObjectiveDesc d_;
  bool bound_ = false;
  std::vector<float> coord_;  ///< per coordinate {y, c, curvature, 0}, host copy
  ColumnPool pool_;
  bool pool_ready_ = false;
  std::vector<index_t> ws_;
  fpga::BufferId pool_val_ = -1, pool_idx_ = -1, col_ptr_ = -1, coord_buf_ = -1, alpha_ = -1, v_ = -1, row_ = -1,
                 order_ = -1, status_ = -1;
  std::size_t col_ptr_cap_ = 0, coord_cap_ = 0, alpha_cap_ = 0, v_cap_ = 0, row_cap_ = 0, order_cap_ = 0;
};

}  // namespace

namespace detail {
std::unique_ptr<Backend> make_fpga_backend(Device kind, const BackendOptions& o) {
  if (kind == Device::fpga_sim) return std::make_unique<FpgaBackend>(kind, fpga::make_sim_device(), o.memory_budget);
  if (o.xclbin.empty())
    throw InvalidArgument(
        "device 'fpga' needs an xclbin: pass --xclbin FILE (the kernel built from hls/ with Vitis, docs/fpga.md)");
  return std::make_unique<FpgaBackend>(kind, fpga::make_xrt_device(o.xclbin), o.memory_budget);
}
}  // namespace detail

}  // namespace hetglm
