// SPDX-License-Identifier: Apache-2.0
// OpenCL backend: float32 data, alpha and v on any OpenCL device (PoCL's CPU device in CI). Kernels in kernels.cl,
// compiled at run time from the embedded source (glm_math.h prepended: the single copy of the math).
// Resident columns live in one device pool placed by the shared ColumnPool (column_pool.hpp); a working-set change
// uploads only the columns that are not resident (one write for a contiguous block). Budget: the user's bytes, capped by
// 3/4 of CL_DEVICE_GLOBAL_MEM_SIZE; the pool never exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE.
#include <CL/cl.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <mutex>

#include "hetglm/backends/registry.hpp"
#include "hetglm/column_pool.hpp"
#include "opencl_sources.hpp"

namespace hetglm {
namespace {

using Clock = std::chrono::steady_clock;

void check(cl_int st, const char* call) {
  if (st != CL_SUCCESS) throw DeviceError(fmt::format("OpenCL error {} in {}", st, call));
}
#define HETGLM_CL_CHECK(call) check((call), #call)

std::string device_string(cl_device_id d, cl_device_info what) {
  std::size_t n = 0;
  clGetDeviceInfo(d, what, 0, nullptr, &n);
  std::string s(n, '\0');
  clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

struct DeviceRef {
  cl_device_id id = nullptr;
  cl_device_type type = 0;
};

std::vector<DeviceRef> list_devices(int platform) {
  cl_uint np = 0;
  if (clGetPlatformIDs(0, nullptr, &np) != CL_SUCCESS || np == 0) return {};
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  std::vector<DeviceRef> out;
  for (cl_uint p = 0; p < np; ++p) {
    if (platform >= 0 && static_cast<cl_uint>(platform) != p) continue;
    cl_uint nd = 0;
    if (clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &nd) != CL_SUCCESS || nd == 0) continue;
    std::vector<cl_device_id> ds(nd);
    clGetDeviceIDs(ps[p], CL_DEVICE_TYPE_ALL, nd, ds.data(), nullptr);
    for (cl_device_id d : ds) {
      DeviceRef r{d, 0};
      clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof(r.type), &r.type, nullptr);
      out.push_back(r);
    }
  }
  return out;
}

/// A buffer that grows (device-to-device copy of its old contents) up to what the budget allows.
struct Buffer {
  cl_mem mem = nullptr;
  std::size_t bytes = 0;
  ~Buffer() {
    if (mem) clReleaseMemObject(mem);
  }
};

class OpenClBackend final : public Backend {
 public:
  OpenClBackend(const BackendOptions& o) {
    std::vector<DeviceRef> devs = list_devices(o.opencl_platform);
    if (devs.empty())
      throw UnsupportedDevice(
          "device 'opencl': no OpenCL device is present (install an ICD such as pocl-opencl-icd, or a GPU driver)");
    if (o.opencl_device >= static_cast<int>(devs.size()))
      throw UnsupportedDevice(fmt::format("device 'opencl': device index {} is out of range ({} devices)",
                                          o.opencl_device, devs.size()));
    dev_ = devs[static_cast<std::size_t>(std::max(o.opencl_device, 0))].id;
    name_ = device_string(dev_, CL_DEVICE_NAME);
    cl_ulong gmem = 0, maxalloc = 0;
    clGetDeviceInfo(dev_, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(gmem), &gmem, nullptr);
    clGetDeviceInfo(dev_, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(maxalloc), &maxalloc, nullptr);
    const std::size_t device_cap = static_cast<std::size_t>(gmem / 4 * 3);
    budget_ = o.memory_budget ? std::min(o.memory_budget, device_cap) : device_cap;
    max_alloc_ = static_cast<std::size_t>(maxalloc);
    cl_int st = CL_SUCCESS;
    ctx_ = clCreateContext(nullptr, 1, &dev_, nullptr, nullptr, &st);
    check(st, "clCreateContext");
    queue_ = clCreateCommandQueue(ctx_, dev_, 0, &st);
    check(st, "clCreateCommandQueue");
    const char* src = opencl_src::kProgram;
    prog_ = clCreateProgramWithSource(ctx_, 1, &src, nullptr, &st);
    check(st, "clCreateProgramWithSource");
    std::string opts = "-cl-std=CL1.2";
    if (!o.opencl_build_options.empty()) opts += " " + o.opencl_build_options;
    if (const char* env = std::getenv("HETGLM_OPENCL_OPTIONS")) opts += std::string(" ") + env;
    st = clBuildProgram(prog_, 1, &dev_, opts.c_str(), nullptr, nullptr);
    if (st != CL_SUCCESS) {
      std::size_t n = 0;
      clGetProgramBuildInfo(prog_, dev_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(prog_, dev_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
      throw DeviceError(fmt::format("OpenCL program build failed on '{}' (error {}): {}", name_, st, log));
    }
    k_epoch_ = clCreateKernel(prog_, "hetglm_epoch", &st);
    check(st, "clCreateKernel(hetglm_epoch)");
    k_gaps_ = clCreateKernel(prog_, "hetglm_gaps", &st);
    check(st, "clCreateKernel(hetglm_gaps)");
  }
  ~OpenClBackend() override {
    if (k_epoch_) clReleaseKernel(k_epoch_);
    if (k_gaps_) clReleaseKernel(k_gaps_);
    if (prog_) clReleaseProgram(prog_);
    for (Buffer* b : all_buffers()) {
      if (b->mem) clReleaseMemObject(b->mem);
      b->mem = nullptr;
    }
    if (queue_) clReleaseCommandQueue(queue_);
    if (ctx_) clReleaseContext(ctx_);
  }

  Device device() const noexcept override { return Device::opencl; }
  std::string description() const override {
    return fmt::format("opencl: {} (float32, budget {} bytes)", name_, budget_);
  }
  std::size_t memory_budget() const noexcept override { return budget_; }

  void bind(const ObjectiveDesc& d) override {
    d_ = d;
    const auto nc = static_cast<std::size_t>(d.n_coords), dim = static_cast<std::size_t>(d.dim);
    auto tofloat = [](const double* p, std::size_t n, float dflt) {
      std::vector<float> out(n, dflt);
      if (p)
        for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<float>(p[i]);
      return out;
    };
    labels_ = tofloat(d.coord_labels, nc, 0.0f);
    weights_ = tofloat(d.coord_weights, nc, 1.0f);
    curv_ = tofloat(d.coord_curvature, nc, 0.0f);
    const bool primal = !d.dual();
    const std::vector<float> rl = tofloat(primal ? d.row_labels : nullptr, primal ? dim : 1, 0.0f);
    const std::vector<float> rw = tofloat(primal ? d.row_weights : nullptr, primal ? dim : 1, 1.0f);
    write(row_lab_, rl.data(), rl.size() * sizeof(float));
    write(row_wt_, rw.data(), rw.size() * sizeof(float));
    std::vector<float> zero(std::max<std::size_t>(dim, 1), 0.0f);
    write(v_, zero.data(), zero.size() * sizeof(float));
    status_zero();
    pool_.reset(0);
    pool_ready_ = false;
    ws_.clear();
  }

  LoadReport load_working_set(std::span<const index_t> coords, const CsrMatrix& A,
                              std::span<const double> alpha_ws) override {
    const auto t0 = Clock::now();
    check_working_set_budget(coords, A, budget_);
    if (!pool_ready_) {  // the pool: the largest working set the budget (and the largest allocation) allows
      const auto cap = static_cast<std::int64_t>(std::min<std::size_t>(std::size_t(A.nnz()), pool_capacity_nnz()));
      ensure(val_, static_cast<std::size_t>(cap) * sizeof(float));
      ensure(idx_, static_cast<std::size_t>(cap) * sizeof(cl_int));
      pool_.reset(cap);
      pool_ready_ = true;
    }
    const ColumnPool::Plan plan = pool_.place(coords, A);
    LoadReport rep;
    const std::size_t fresh_nnz = static_cast<std::size_t>(plan.fresh_nnz);
    std::vector<cl_int> idx(fresh_nnz);
    std::vector<float> val(fresh_nnz);
    ColumnPool::stage(plan, coords, A, idx.data(), val.data());
    ColumnPool::for_each_copy(plan, [&](std::int64_t from, std::int64_t n, std::int64_t at) {
      const auto f = static_cast<std::size_t>(from), c = static_cast<std::size_t>(n), o = static_cast<std::size_t>(at);
      HETGLM_CL_CHECK(clEnqueueWriteBuffer(queue_, val_.mem, CL_FALSE, o * sizeof(float), c * sizeof(float),
                                           val.data() + f, 0, nullptr, nullptr));
      HETGLM_CL_CHECK(clEnqueueWriteBuffer(queue_, idx_.mem, CL_FALSE, o * sizeof(cl_int), c * sizeof(cl_int),
                                           idx.data() + f, 0, nullptr, nullptr));
    });
    HETGLM_CL_CHECK(clFinish(queue_));  // the staging vectors go out of scope
    rep.columns_copied = plan.fresh.size();
    rep.bytes_copied = fresh_nnz * kBytesPerNonzero;
    ws_.assign(coords.begin(), coords.end());
    // Per-position data of the working set (small: kBytesPerCoordinate per coordinate).
    const std::size_t n = std::max<std::size_t>(ws_.size(), 1);
    std::vector<cl_long> start(n, 0);
    std::vector<cl_int> len(n, 0);
    std::vector<float> alpha(n, 0.0f), lab(n, 0.0f), wt(n, 1.0f), curv(n, 0.0f);
    for (std::size_t p = 0; p < ws_.size(); ++p) {
      const index_t i = ws_[p];
      const ColumnPool::Range& s = plan.slots[p];
      start[p] = static_cast<cl_long>(s.offset);
      len[p] = static_cast<cl_int>(s.len);
      alpha[p] = static_cast<float>(alpha_ws[p]);
      lab[p] = labels_[i];
      wt[p] = weights_[i];
      curv[p] = curv_[i];
    }
    write(start_, start.data(), n * sizeof(cl_long));
    write(len_, len.data(), n * sizeof(cl_int));
    write(alpha_, alpha.data(), n * sizeof(float));
    write(lab_, lab.data(), n * sizeof(float));
    write(wt_, wt.data(), n * sizeof(float));
    write(curv_buf_, curv.data(), n * sizeof(float));
    rep.bytes_copied += ws_.size() * (sizeof(cl_long) + sizeof(cl_int) + 4 * sizeof(float));
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  void set_shared_vector(std::span<const double> v) override {
    std::vector<float> f(v.begin(), v.end());
    if (f.empty()) f.push_back(0.0f);
    write(v_, f.data(), f.size() * sizeof(float));
  }

  EpochReport run_epochs(int epochs, std::uint64_t seed, double sigma) override {
    const auto t0 = Clock::now();
    EpochReport rep;
    const cl_int count = static_cast<cl_int>(ws_.size());
    if (count == 0) return rep;
    status_zero();
    set_common_args();
    const float s = static_cast<float>(sigma);
    cl_kernel k = k_epoch_;
    HETGLM_CL_CHECK(clSetKernelArg(k, 12, sizeof(cl_int), &count));
    HETGLM_CL_CHECK(clSetKernelArg(k, 21, sizeof(float), &s));
    HETGLM_CL_CHECK(clSetKernelArg(k, 22, sizeof(cl_mem), &status_.mem));
    for (int e = 0; e < epochs; ++e) {
      const std::vector<std::int32_t> order = epoch_order(ws_.size(), seed, e);
      write(order_, order.data(), order.size() * sizeof(std::int32_t));
      HETGLM_CL_CHECK(clSetKernelArg(k, 11, sizeof(cl_mem), &order_.mem));
      const std::size_t one = 1;
      HETGLM_CL_CHECK(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &one, &one, 0, nullptr, nullptr));
      ++rep.epochs;
      rep.updates += ws_.size();
    }
    cl_int status = 0;
    HETGLM_CL_CHECK(clEnqueueReadBuffer(queue_, status_.mem, CL_TRUE, 0, sizeof(cl_int), &status, 0, nullptr, nullptr));
    rep.numerics_ok = status == 0;
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  }

  void get_alpha(std::span<double> out) const override {
    if (ws_.empty()) return;
    std::vector<float> a(ws_.size());
    HETGLM_CL_CHECK(clEnqueueReadBuffer(queue_, alpha_.mem, CL_TRUE, 0, a.size() * sizeof(float), a.data(), 0, nullptr,
                                        nullptr));
    for (std::size_t p = 0; p < a.size() && p < out.size(); ++p) out[p] = a[p];
  }
  void get_shared_vector(std::span<double> out) const override {
    std::vector<float> f(static_cast<std::size_t>(d_.dim));
    if (f.empty()) return;
    HETGLM_CL_CHECK(clEnqueueReadBuffer(queue_, v_.mem, CL_TRUE, 0, f.size() * sizeof(float), f.data(), 0, nullptr,
                                        nullptr));
    for (std::size_t k = 0; k < f.size() && k < out.size(); ++k) out[k] = f[k];
  }
  bool coordinate_gaps(std::span<double> out) const override {
    if (ws_.empty()) return true;
    auto* self = const_cast<OpenClBackend*>(this);
    self->ensure(self->gaps_, ws_.size() * sizeof(float));
    const cl_int count = static_cast<cl_int>(ws_.size());
    cl_kernel k = k_gaps_;
    const cl_mem a[] = {start_.mem, len_.mem, val_.mem, idx_.mem, alpha_.mem, lab_.mem, wt_.mem, row_lab_.mem, row_wt_.mem, v_.mem};
    for (cl_uint j = 0; j < 10; ++j) HETGLM_CL_CHECK(clSetKernelArg(k, j, sizeof(cl_mem), &a[j]));
    HETGLM_CL_CHECK(clSetKernelArg(k, 10, sizeof(cl_int), &count));
    self->set_objective_args(k, 11);
    HETGLM_CL_CHECK(clSetKernelArg(k, 19, sizeof(cl_mem), &gaps_.mem));
    const std::size_t gsz = ws_.size();
    HETGLM_CL_CHECK(clEnqueueNDRangeKernel(queue_, k, 1, nullptr, &gsz, nullptr, 0, nullptr, nullptr));
    std::vector<float> g(ws_.size());
    HETGLM_CL_CHECK(clEnqueueReadBuffer(queue_, gaps_.mem, CL_TRUE, 0, g.size() * sizeof(float), g.data(), 0, nullptr,
                                        nullptr));
    for (std::size_t p = 0; p < g.size() && p < out.size(); ++p) out[p] = g[p];
    return true;
  }

 private:
  std::vector<Buffer*> all_buffers() {
    return {&val_, &idx_, &start_, &len_, &alpha_, &lab_, &wt_, &curv_buf_, &row_lab_, &row_wt_, &v_, &order_, &status_, &gaps_};
  }
  std::size_t pool_capacity_nnz() const {
    return std::min(budget_ / kBytesPerNonzero, max_alloc_ / sizeof(float));
  }

  /// Make `b` at least `bytes` long (contents are not kept).
  void ensure(Buffer& b, std::size_t bytes) {
    bytes = std::max<std::size_t>(bytes, 4);
    if (b.mem && b.bytes >= bytes) return;
    if (b.mem) clReleaseMemObject(b.mem);
    cl_int st = CL_SUCCESS;
    b.mem = clCreateBuffer(ctx_, CL_MEM_READ_WRITE, bytes, nullptr, &st);
    b.bytes = 0;
    check(st, "clCreateBuffer");
    b.bytes = bytes;
  }
  void write(Buffer& b, const void* data, std::size_t bytes) {
    ensure(b, bytes);
    HETGLM_CL_CHECK(clEnqueueWriteBuffer(queue_, b.mem, CL_TRUE, 0, bytes, data, 0, nullptr, nullptr));
  }
  void status_zero() {
    const cl_int zero = 0;
    write(status_, &zero, sizeof(zero));
  }
  /// The coordinate kernel's scalars (glm_math.h hetglm_objective_make_f arguments) from argument `first` on:
  /// formulation, loss, penalty, lambda, eta, bound, 1/n, and the dual's 1/(lambda n) (the primal's scale is 1/n).
  void set_objective_args(cl_kernel k, cl_uint first) {
    const ObjectiveF o = to_float(d_.obj);
    HETGLM_CL_CHECK(clSetKernelArg(k, first, sizeof(cl_int), &o.formulation));
    HETGLM_CL_CHECK(clSetKernelArg(k, first + 1, sizeof(cl_int), &o.loss));
    HETGLM_CL_CHECK(clSetKernelArg(k, first + 2, sizeof(cl_int), &o.penalty));
    HETGLM_CL_CHECK(clSetKernelArg(k, first + 3, sizeof(float), &o.lambda));
    HETGLM_CL_CHECK(clSetKernelArg(k, first + 4, sizeof(float), &o.eta));
    HETGLM_CL_CHECK(clSetKernelArg(k, first + 5, sizeof(float), &o.bound));
    HETGLM_CL_CHECK(clSetKernelArg(k, first + 6, sizeof(float), &o.inv_n));
    HETGLM_CL_CHECK(clSetKernelArg(k, first + 7, sizeof(float), &o.scale));
  }
  void set_common_args() {
    cl_kernel k = k_epoch_;
    const cl_mem a[] = {start_.mem, len_.mem, val_.mem, idx_.mem, alpha_.mem, lab_.mem, wt_.mem, curv_buf_.mem, row_lab_.mem, row_wt_.mem, v_.mem};
    for (cl_uint j = 0; j < 11; ++j) HETGLM_CL_CHECK(clSetKernelArg(k, j, sizeof(cl_mem), &a[j]));
    set_objective_args(k, 13);
  }

  cl_device_id dev_ = nullptr;
  cl_context ctx_ = nullptr;
  cl_command_queue queue_ = nullptr;
  cl_program prog_ = nullptr;
  cl_kernel k_epoch_ = nullptr, k_gaps_ = nullptr;
  std::string name_;
  std::size_t budget_ = 0, max_alloc_ = 0;
  ObjectiveDesc d_;
  std::vector<float> labels_, weights_, curv_;
  Buffer val_, idx_, start_, len_, alpha_, lab_, wt_, curv_buf_, row_lab_, row_wt_, v_, order_, status_, gaps_;
  ColumnPool pool_;
  bool pool_ready_ = false;
  std::vector<index_t> ws_;
};

}  // namespace

namespace detail {
std::unique_ptr<Backend> make_opencl_backend(const BackendOptions& options) {
  return std::make_unique<OpenClBackend>(options);
}
int opencl_device_count(bool non_cpu) {
  int n = 0;
  for (const DeviceRef& d : list_devices(-1))
    if (!non_cpu || !(d.type & CL_DEVICE_TYPE_CPU)) ++n;
  return n;
}
}  // namespace detail

}  // namespace hetglm
