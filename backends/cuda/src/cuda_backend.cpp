// SPDX-License-Identifier: Apache-2.0
// The CUDA backend (cuda_backend.hpp, docs/cuda.md): device buffers, streams, working-set swaps and the TPA-SCD
// epochs of tpa_scd.cuh. Compiled by the host compiler (C++20, like the rest of the library) against the CUDA
// runtime API; the kernels and their launchers are compiled by nvcc (tpa_scd.cu, C++17). Every CUDA call and
// launch goes through HETGLM_CUDA_CHECK.
#include "hetglm/backends/cuda_backend.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "cuda_check.hpp"
#include "hetglm/column_pool.hpp"
#include "hetglm/tpa_schedule.hpp"
#include "tpa_scd.hpp"

namespace hetglm::cuda {

DeviceProbe probe() {
  DeviceProbe p;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    p.reason = "cudaGetDeviceCount: " + detail::cuda_error_text(e);
    return p;
  }
  if (n <= 0) {
    p.reason = "cudaGetDeviceCount found no device";
    return p;
  }
  p.count = n;
  return p;
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// Device memory that only grows (contents are dropped when it grows).
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { if (p_) (void)cudaFree(p_); }
  void reserve(std::size_t n) {
    if (n <= n_) return;
    if (p_) HETGLM_CUDA_CHECK(cudaFree(p_));
    p_ = nullptr;
    n_ = 0;
    HETGLM_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
    n_ = n;
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

/// Page-locked host memory (cudaHostAlloc) for asynchronous copies; grows like DeviceBuffer.
template <class T>
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { if (p_) (void)cudaFreeHost(p_); }
  void reserve(std::size_t n) {
    if (n <= n_) return;
    const std::size_t grown = std::max(n, n_ + n_ / 2);
    if (p_) HETGLM_CUDA_CHECK(cudaFreeHost(p_));
    p_ = nullptr;
    n_ = 0;
    HETGLM_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&p_), grown * sizeof(T), cudaHostAllocDefault));
    n_ = grown;
  }
  T* get() const { return p_; }
  T& operator[](std::size_t i) { return p_[i]; }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

std::vector<float> to_float_array(const double* p, std::size_t n, float fill) {
  std::vector<float> out(n, fill);
  if (p)
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
  return out;
}

class CudaBackend final : public Backend {
 public:
  CudaBackend(const BackendOptions& o, const CudaOptions& c) : copt_(c) {
    HETGLM_CUDA_CHECK(cudaSetDevice(c.device));
    tpa_.concurrency = c.tpa_concurrency;
    tpa_.safeguard = c.tpa_safeguard;
    cudaDeviceProp prop{};
    HETGLM_CUDA_CHECK(cudaGetDeviceProperties(&prop, c.device));
    name_ = prop.name;
    cc_ = std::to_string(prop.major) + std::to_string(prop.minor);
    std::size_t free_b = 0, total_b = 0;
    HETGLM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double frac = (c.budget_fraction > 0 && c.budget_fraction <= 1) ? c.budget_fraction : 0.8;
    const auto device_limit = static_cast<std::size_t>(frac * double(free_b));
    budget_ = o.memory_budget ? std::min(o.memory_budget, device_limit) : device_limit;
    HETGLM_CUDA_CHECK(cudaStreamCreateWithFlags(&compute_, cudaStreamNonBlocking));
    HETGLM_CUDA_CHECK(cudaStreamCreateWithFlags(&copy_, cudaStreamNonBlocking));
    HETGLM_CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
    nonfinite_.reserve(1);
    gap_sum_.reserve(1);
  }
  ~CudaBackend() override {
    (void)cudaSetDevice(copt_.device);
    if (compute_) { (void)cudaStreamSynchronize(compute_); (void)cudaStreamDestroy(compute_); }
    if (copy_) { (void)cudaStreamSynchronize(copy_); (void)cudaStreamDestroy(copy_); }
    if (ready_) (void)cudaEventDestroy(ready_);
  }

  Device device() const noexcept override { return Device::cuda; }
  std::string description() const override {
    std::string sched = copt_.sequential ? "sequential" : "waves";
    if (!copt_.sequential) {
      if (!tpa_.safeguard) sched += " unsafeguarded";
      if (planned_) sched += ": " + schedule_.describe() + ", " + std::to_string(grid_) + " blocks" +
                             (cooperative_ ? " persistent" : " per-wave launches");
    }
    return "CUDA " + name_ + " (sm_" + cc_ + ", float32, TPA-SCD " + sched + ", budget " + std::to_string(budget_) +
           " bytes)";
  }
  std::size_t memory_budget() const noexcept override { return budget_; }

  void bind(const ObjectiveDesc& d) override {
    use_device();
    sync_all();
    d_ = d;
    d_.coord_labels = d_.coord_weights = d_.coord_curvature = d_.row_labels = d_.row_weights = nullptr;
    const auto nc = static_cast<std::size_t>(d.n_coords), dim = static_cast<std::size_t>(d.dim);
    upload(labels_, to_float_array(d.coord_labels, nc, 0.0f));
    upload(weights_, to_float_array(d.coord_weights, nc, 1.0f));
    upload(curv_, to_float_array(d.coord_curvature, nc, 0.0f));
    if (!d.dual()) {
      upload(row_labels_, to_float_array(d.row_labels, dim, 0.0f));
      upload(row_weights_, to_float_array(d.row_weights, dim, 1.0f));
    }
    // Host copies in double: the weights for the domain edges of get_alpha, the row weights for the wave schedule.
    coord_weights_d_ = d.coord_weights ? std::vector<double>(d.coord_weights, d.coord_weights + nc) : std::vector<double>(nc, 1.0);
    row_weights_d_ = !d.dual() && d.row_weights ? std::vector<double>(d.row_weights, d.row_weights + dim) : std::vector<double>{};
    planned_ = false;
    v_.reserve(std::max<std::size_t>(dim, 1));
    HETGLM_CUDA_CHECK(cudaMemsetAsync(v_.get(), 0, dim * sizeof(float), compute_));
    const std::size_t m = std::max<std::size_t>(nc, 1);
    col_off_.reserve(m);
    col_len_.reserve(m);
    col_coord_.reserve(m);
    alpha_.reserve(m);
    gaps_.reserve(m);
    pool_.reset(0);
    ws_.clear();
    ws_old_.clear();
    pending_copy_ = false;
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
  }

  LoadReport load_working_set(std::span<const index_t> coords, const CsrMatrix& A,
                              std::span<const double> alpha_ws) override {
    use_device();
    const auto t0 = Clock::now();
    if (alpha_ws.size() != coords.size())
      throw InvalidArgument("load_working_set: alpha_ws has " + std::to_string(alpha_ws.size()) + " values for " +
                            std::to_string(coords.size()) + " coordinates");
    for (index_t i : coords)
      if (i < 0 || i >= A.n_rows || i >= d_.n_coords)
        throw InvalidArgument("load_working_set: coordinate " + std::to_string(i) + " is out of range");
    check_working_set_budget(coords, A, budget_);
    sync_all();  // staging buffers are reused; nothing of the previous round is in flight
    pending_copy_ = false;
    if (pool_.capacity() == 0 && A.nnz() > 0) {  // the arena: the largest working set the budget allows
      const auto cap = static_cast<std::int64_t>(
          std::min<std::size_t>(static_cast<std::size_t>(A.nnz()), budget_ / kBytesPerNonzero));
      idx_.reserve(static_cast<std::size_t>(std::max<std::int64_t>(cap, 1)));
      val_.reserve(static_cast<std::size_t>(std::max<std::int64_t>(cap, 1)));
      pool_.reset(cap);
    }
    // The shared resident-column pool (column_pool.hpp) decides where every column lives and what travels.
    const ColumnPool::Plan plan = pool_.place(coords, A);
    ws_old_.assign(coords.size(), 1);
    for (std::size_t p : plan.fresh) ws_old_[p] = 0;
    LoadReport rep;
    // Stage the new columns in pinned memory and send them on the copy stream: one copy for a contiguous block, else
    // one per column.
    const std::size_t fresh_nnz = static_cast<std::size_t>(plan.fresh_nnz);
    stage_idx_.reserve(std::max<std::size_t>(fresh_nnz, 1));
    stage_val_.reserve(std::max<std::size_t>(fresh_nnz, 1));
    ColumnPool::stage(plan, coords, A, stage_idx_.get(), stage_val_.get());
    ColumnPool::for_each_copy(plan, [&](std::int64_t from, std::int64_t n, std::int64_t at) {
      const auto bytes = static_cast<std::size_t>(n) * 4;
      HETGLM_CUDA_CHECK(cudaMemcpyAsync(idx_.get() + at, stage_idx_.get() + from, bytes, cudaMemcpyHostToDevice, copy_));
      HETGLM_CUDA_CHECK(cudaMemcpyAsync(val_.get() + at, stage_val_.get() + from, bytes, cudaMemcpyHostToDevice, copy_));
    });
    for (std::size_t p : plan.fresh) {
      ++rep.columns_copied;
      rep.bytes_copied += column_bytes(A, coords[p]);
    }
    if (!plan.fresh.empty()) {  // run_epochs waits for this event before it visits the new columns
      HETGLM_CUDA_CHECK(cudaEventRecord(ready_, copy_));
      pending_copy_ = true;
    }
    // Per-position metadata and alpha (small) on the compute stream.
    const std::size_t m = coords.size();
    ws_.assign(coords.begin(), coords.end());
    meta_off_.reserve(std::max<std::size_t>(m, 1));
    meta_i32_.reserve(std::max<std::size_t>(2 * m, 1));
    stage_f_.reserve(std::max<std::size_t>(m, 1));
    std::int64_t nnz = 0;
    alpha0_.assign(alpha_ws.begin(), alpha_ws.end());
    for (std::size_t p = 0; p < m; ++p) {
      const ColumnPool::Range& r = plan.slots[p];
      meta_off_[p] = r.offset;
      meta_i32_[p] = static_cast<std::int32_t>(r.len);
      meta_i32_[m + p] = coords[p];
      stage_f_[p] = static_cast<float>(alpha_ws[p]);
      nnz += r.len;
    }
    if (m > 0) {
      HETGLM_CUDA_CHECK(cudaMemcpyAsync(col_off_.get(), meta_off_.get(), m * 8, cudaMemcpyHostToDevice, compute_));
      HETGLM_CUDA_CHECK(cudaMemcpyAsync(col_len_.get(), meta_i32_.get(), m * 4, cudaMemcpyHostToDevice, compute_));
      HETGLM_CUDA_CHECK(cudaMemcpyAsync(col_coord_.get(), meta_i32_.get() + m, m * 4, cudaMemcpyHostToDevice, compute_));
      HETGLM_CUDA_CHECK(cudaMemcpyAsync(alpha_.get(), stage_f_.get(), m * 4, cudaMemcpyHostToDevice, compute_));
      HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
    }
    rep.bytes_copied += m * sizeof(float);
    const double mean = m ? double(nnz) / double(m) : 0.0;
    const int threads_before = threads_;
    threads_ = copt_.threads_per_block;
    if (threads_ <= 0) {
      threads_ = 32;
      while (threads_ < 512 && double(threads_) < mean) threads_ *= 2;
    }
    // Copy of the float alpha the device starts from (get_alpha returns alpha0_ + the device's change).
    alpha0_dev_.assign(stage_f_.get(), stage_f_.get() + m);
    // The wave schedule (tpa_schedule.hpp; the same plan the cpu stand-in's emulation makes): planned again when the
    // working set or the block size changed. Coordinates in flight: --tpa-concurrency, else the resident blocks.
    if (!copt_.sequential && m > 0 && (!planned_ || !plan.fresh.empty() || planned_size_ != m || threads_ != threads_before)) {
      int capacity = 1;
      bool coop = false;
      HETGLM_CUDA_CHECK(detail::wave_capacity(threads_, &capacity, &coop));
      cooperative_ = coop && copt_.wave_mode != CudaOptions::WaveMode::launches;
      if (copt_.wave_mode == CudaOptions::WaveMode::cooperative && !coop)
        throw DeviceError("device 'cuda': cooperative launches are not supported by this device");
      tpa_.concurrency = copt_.tpa_concurrency > 0 ? copt_.tpa_concurrency : capacity;
      schedule_ = tpa::plan(A, coords, row_weights_d_.empty() ? nullptr : row_weights_d_.data(), tpa_);
      grid_ = static_cast<int>(std::min<std::int64_t>(schedule_.wave, cooperative_ ? capacity : schedule_.wave));
      wave_delta_.reserve(static_cast<std::size_t>(std::max<std::int64_t>(schedule_.wave, 1)));
      planned_ = true;
      planned_size_ = m;
    }
    rep.seconds = seconds_since(t0);  // the column copies may still be in flight (overlapped with run_epochs)
    return rep;
  }

  void set_shared_vector(std::span<const double> v) override {
    use_device();
    const auto dim = static_cast<std::size_t>(d_.dim);
    if (v.size() < dim) throw InvalidArgument("set_shared_vector: " + std::to_string(v.size()) + " values for " + std::to_string(dim));
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
    stage_v_.reserve(std::max<std::size_t>(dim, 1));
    for (std::size_t k = 0; k < dim; ++k) stage_v_[k] = static_cast<float>(v[k]);
    HETGLM_CUDA_CHECK(cudaMemcpyAsync(v_.get(), stage_v_.get(), dim * 4, cudaMemcpyHostToDevice, compute_));
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
  }

  EpochReport run_epochs(int epochs, std::uint64_t seed, double sigma) override {
    use_device();  // DuHL calls this from its own thread, whose current device is 0
    const auto t0 = Clock::now();
    EpochReport rep;
    const std::size_t m = ws_.size();
    if (epochs <= 0) return rep;
    if (m == 0) {
      rep.epochs = epochs;
      return rep;
    }
    // Host permutations (backend.hpp epoch_order, the reference order), one copy for all the epochs.
    stage_order_.reserve(m * static_cast<std::size_t>(epochs));
    std::size_t n_old = m;
    for (int e = 0; e < epochs; ++e) {
      std::vector<std::int32_t> ord = epoch_order(m, seed, e);
      if (e == 0 && pending_copy_ && !copt_.sequential) {
        // Overlap: visit the already-resident positions first while the new columns are still travelling.
        auto mid = std::stable_partition(ord.begin(), ord.end(), [&](std::int32_t p) { return ws_old_[std::size_t(p)] != 0; });
        n_old = static_cast<std::size_t>(mid - ord.begin());
      }
      std::memcpy(stage_order_.get() + std::size_t(e) * m, ord.data(), m * sizeof(std::int32_t));
    }
    order_.reserve(m * static_cast<std::size_t>(epochs));
    HETGLM_CUDA_CHECK(cudaMemcpyAsync(order_.get(), stage_order_.get(), m * std::size_t(epochs) * 4,
                                      cudaMemcpyHostToDevice, compute_));
    HETGLM_CUDA_CHECK(cudaMemsetAsync(nonfinite_.get(), 0, sizeof(int), compute_));
    // Curvature x DuHL's sigma' x the wave's sigma'; v moves by DuHL's sigma' (tpa_schedule.hpp).
    const detail::KernelArgs a = args(sigma, copt_.sequential ? 1.0 : schedule_.sigma);
    auto launch = [&](const std::int32_t* ord, std::size_t count) {
      if (copt_.sequential)
        HETGLM_CUDA_CHECK(detail::launch_epoch_sequential(a, ord, static_cast<int>(count), threads_, compute_));
      else
        HETGLM_CUDA_CHECK(detail::launch_epoch_waves(a, ord, static_cast<int>(count), static_cast<int>(schedule_.wave),
                                                     threads_, grid_, cooperative_, compute_));
    };
    for (int e = 0; e < epochs; ++e) {
      const std::int32_t* ord = order_.get() + std::size_t(e) * m;
      if (e == 0 && pending_copy_) {
        if (!copt_.sequential && n_old > 0) launch(ord, n_old);
        else n_old = 0;
        HETGLM_CUDA_CHECK(cudaStreamWaitEvent(compute_, ready_, 0));
        pending_copy_ = false;
        launch(ord + n_old, m - n_old);
      } else {
        launch(ord, m);
      }
      ++rep.epochs;
    }
    int bad = 0;
    HETGLM_CUDA_CHECK(cudaMemcpyAsync(&bad, nonfinite_.get(), sizeof(int), cudaMemcpyDeviceToHost, compute_));
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
    rep.numerics_ok = bad == 0;
    rep.updates = m * static_cast<std::size_t>(epochs);
    rep.seconds = seconds_since(t0);
    return rep;
  }

  /// The host's double alpha plus the device's change (backend.hpp device_alpha_to_host): alpha is never rounded
  /// through float across rounds.
  void get_alpha(std::span<double> out) const override {
    use_device();
    const std::size_t m = std::min(ws_.size(), out.size());
    if (m == 0) return;
    stage_f_.reserve(m);
    HETGLM_CUDA_CHECK(cudaMemcpyAsync(stage_f_.get(), alpha_.get(), m * 4, cudaMemcpyDeviceToHost, compute_));
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
    for (std::size_t p = 0; p < m; ++p)
      out[p] = device_alpha_to_host(alpha0_[p], alpha0_dev_[p], stage_f_[p],
                                    domain_edge(d_.obj, coord_weights_d_[static_cast<std::size_t>(ws_[p])]));
  }

  void get_shared_vector(std::span<double> out) const override {
    use_device();
    const std::size_t dim = std::min(static_cast<std::size_t>(d_.dim), out.size());
    if (dim == 0) return;
    stage_v_.reserve(dim);
    HETGLM_CUDA_CHECK(cudaMemcpyAsync(stage_v_.get(), v_.get(), dim * 4, cudaMemcpyDeviceToHost, compute_));
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
    for (std::size_t k = 0; k < dim; ++k) out[k] = stage_v_[k];
  }

  bool coordinate_gaps(std::span<double> out) const override {
    use_device();
    const std::size_t m = std::min(ws_.size(), out.size());
    if (m == 0) return true;
    if (pending_copy_) HETGLM_CUDA_CHECK(cudaStreamWaitEvent(compute_, ready_, 0));
    HETGLM_CUDA_CHECK(cudaMemsetAsync(gap_sum_.get(), 0, sizeof(double), compute_));
    HETGLM_CUDA_CHECK(detail::launch_gaps(args(1.0, 1.0), static_cast<int>(m), threads_, gaps_.get(), gap_sum_.get(), compute_));
    stage_d_.reserve(m);
    HETGLM_CUDA_CHECK(cudaMemcpyAsync(stage_d_.get(), gaps_.get(), m * 8, cudaMemcpyDeviceToHost, compute_));
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
    for (std::size_t p = 0; p < m; ++p) out[p] = stage_d_[p];
    return true;
  }

 private:
  /// Every entry point makes the backend's device current: the DuHL scheduler calls run_epochs from its own thread.
  void use_device() const { HETGLM_CUDA_CHECK(cudaSetDevice(copt_.device)); }

  void sync_all() const {
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(copy_));
    HETGLM_CUDA_CHECK(cudaStreamSynchronize(compute_));
  }

  void upload(DeviceBuffer<float>& buf, const std::vector<float>& host) {
    buf.reserve(std::max<std::size_t>(host.size(), 1));
    if (!host.empty())
      HETGLM_CUDA_CHECK(cudaMemcpy(buf.get(), host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice));
  }

  detail::KernelArgs args(double sigma, double wave_sigma) const {
    detail::KernelArgs a;
    a.obj_d = d_.obj;
    a.obj = to_float(d_.obj);
    a.sigma = float(sigma * wave_sigma);
    a.sigma_v = float(sigma);
    a.wave_delta = wave_delta_.get();
    a.col_off = col_off_.get();
    a.col_len = col_len_.get();
    a.col_coord = col_coord_.get();
    a.alpha = alpha_.get();
    a.idx = idx_.get();
    a.val = val_.get();
    a.v = v_.get();
    a.labels = labels_.get();
    a.weights = weights_.get();
    a.curvature = curv_.get();
    a.row_labels = row_labels_.get();
    a.row_weights = row_weights_.get();
    a.nonfinite = nonfinite_.get();
    return a;
  }

  CudaOptions copt_;
  std::string name_, cc_;
  std::size_t budget_ = 0;
  cudaStream_t compute_ = nullptr, copy_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  mutable bool pending_copy_ = false;
  int threads_ = 32;
  ObjectiveDesc d_;
  // Device state.
  DeviceBuffer<float> v_, labels_, weights_, curv_, row_labels_, row_weights_, alpha_, val_, wave_delta_;
  DeviceBuffer<std::int64_t> col_off_;
  DeviceBuffer<std::int32_t> col_len_, col_coord_, order_, idx_;
  DeviceBuffer<int> nonfinite_;
  DeviceBuffer<double> gaps_, gap_sum_;
  // Host bookkeeping (the shared pool) and pinned staging.
  ColumnPool pool_;
  std::vector<index_t> ws_;
  std::vector<char> ws_old_;
  PinnedBuffer<std::int32_t> stage_idx_, meta_i32_, stage_order_;
  PinnedBuffer<float> stage_val_;
  PinnedBuffer<std::int64_t> meta_off_;
  mutable PinnedBuffer<float> stage_f_, stage_v_;
  mutable PinnedBuffer<double> stage_d_;
  // Host alpha in double (as loaded) and the float copy the device started from; double weights.
  std::vector<double> alpha0_, coord_weights_d_, row_weights_d_;
  std::vector<float> alpha0_dev_;
  // The wave schedule of the current working set.
  tpa::ScheduleOptions tpa_;
  tpa::Schedule schedule_;
  bool planned_ = false, cooperative_ = false;
  std::size_t planned_size_ = 0;
  int grid_ = 1;
};

}  // namespace

double time_device_copy(std::size_t bytes, int reps, int device) {
  const DeviceProbe p = probe();
  if (p.count == 0) throw UnsupportedDevice("device 'cuda': no CUDA device is present (" + p.reason + ")");
  HETGLM_CUDA_CHECK(cudaSetDevice(device));
  double s = 0;
  HETGLM_CUDA_CHECK(detail::time_device_copy(bytes, reps, &s));
  return s;
}

std::unique_ptr<Backend> make_cuda_backend(const BackendOptions& options, const CudaOptions& cuda) {
  const DeviceProbe p = probe();
  if (p.count == 0) throw UnsupportedDevice("device 'cuda': no CUDA device is present (" + p.reason + ")");
  if (cuda.device < 0 || cuda.device >= p.count)
    throw UnsupportedDevice("device 'cuda': no CUDA device " + std::to_string(cuda.device) + " (" +
                            std::to_string(p.count) + " present)");
  return std::make_unique<CudaBackend>(options, cuda);
}

}  // namespace hetglm::cuda
