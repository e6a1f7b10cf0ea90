// SPDX-License-Identifier: Apache-2.0
// hetglm._hetglm: the nanobind extension behind the Python package. It exposes the engine as it is
// (train() with TrainOptions, the model file, the libsvm reader/writer) and converts numpy / scipy.sparse
// inputs to hetglm::CsrMatrix in one C++ pass. The scikit-learn estimators live in hetglm/_estimators.py.
//
// Errors: InvalidArgument, ParseError and UnsupportedDevice -> ValueError, IoError -> OSError (FileNotFoundError when the
// file does not exist), TrainingError and any other hetglm::Error -> RuntimeError, each with the engine's
// message. train() releases the GIL and polls PyErr_CheckSignals once per epoch, so Ctrl-C raises
// KeyboardInterrupt.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "common.hpp"
#include "hetglm/backend.hpp"
#include "hetglm/config.hpp"
#include "hetglm/error.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/memory.hpp"
#include "hetglm/model.hpp"
#include "hetglm/backends/registry.hpp"
#include "hetglm/solvers/newton.hpp"
#include "hetglm/train.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace hetglm::py {
void bind_svmlight(nb::module_& m);  // svmlight.cpp


namespace {

index_t checked_dim(std::int64_t n, const char* what) {
  if (n < 0 || n > INT32_MAX) throw InvalidArgument(std::string(what) + " must be between 0 and 2^31-1");
  return static_cast<index_t>(n);
}

/// One stretch [t0, t1) of a contiguous input row: values rounded to float32 and their indices written, the zeros
/// and the entries the engine cannot hold (NaN, infinity, beyond float32 range: !(|x| <= FLT_MAX), one test for
/// all three; for float64 input also a nonzero below float32's normal range, |x| < FLT_MIN, which float32 turns
/// into 0 or a subnormal of a few digits) counted. Written so that the compiler vectorizes it (a loop that kept its
/// counter in memory converted 400,000 x 100 in 190 ms, about half of it this loop).
template <class T>
inline bool beyond_float(T x) {
  const T a = std::abs(x);
  if constexpr (std::is_same_v<T, double>)
    return (!(a <= static_cast<T>(std::numeric_limits<float>::max()))) |
           ((a < static_cast<T>(std::numeric_limits<float>::min())) & (a != T(0)));
  else
    return !(a <= static_cast<T>(std::numeric_limits<float>::max()));
}
template <class T, bool kLo>
inline void convert_stretch(const T* src, std::int64_t t0, std::int64_t t1, float* vo, float* lo, index_t* io,
                            int& zeros, int& bad, int& tiny) {
  int z = 0, b = 0, s = 0;
  for (std::int64_t j = t0; j < t1; ++j) {
    const T x = src[j];
    vo[j] = static_cast<float>(x);
    if constexpr (kLo) lo[j] = values_lo_of(x);
    io[j] = static_cast<index_t>(j);
    z += x == T(0);
    b += beyond_float(x);
    if constexpr (kLo) s += values_lo_loses_bits(x);
  }
  zeros += z;
  bad += b;
  tiny += s;
}

/// Dense (n, d) array -> CSR (zeros dropped), values rounded to float32, in parallel over blocks of rows or
/// columns. `row_stride` / `col_stride` are the element strides of the array (C order: d, 1; Fortran order: 1, n).
/// by_feature = false: the CSR of X (samples as rows); true: the CSR of X^T (features as rows, Dataset::by_feature).
/// One pass writes every entry as if the array had no zeros (the common dense case, and then the result is "full":
/// the solvers' contiguous kernels apply); zeros found on the way trigger a second, compacting pass. The same pass
/// counts the entries that are NaN, infinite or beyond float32 range into `bad` (the estimators then name the first
/// one; the finite and range checks cost two to three more passes over a float64 array in numpy).
/// bias >= 0 (samples as rows only): every row also gets the bias column, index d, value `bias` (what
/// with_bias_column would add, without its copy of the whole matrix). float64 input with keep_lo also fills
/// values_lo (dropped when float32 holds every entry exactly).
template <class T>
CsrMatrix csr_from_dense(const T* a, std::int64_t n, std::int64_t d, std::int64_t row_stride, std::int64_t col_stride,
                         bool by_feature, std::int64_t& bad, double bias, bool keep_lo, const double* offset = nullptr) {
  CsrMatrix m;
  const std::int64_t major = by_feature ? d : n, minor = by_feature ? n : d;
  const std::int64_t s_major = by_feature ? col_stride : row_stride, s_minor = by_feature ? row_stride : col_stride;
  if (by_feature && bias >= 0) throw InvalidArgument("matrix_from_dense: a bias column needs samples as rows");
  const std::int64_t extra = bias >= 0 ? 1 : 0, mo = minor + extra;  // entries per output row (full rows)
  m.n_rows = checked_dim(major, by_feature ? "the number of features" : "the number of samples");
  m.n_cols = checked_dim(mo, by_feature ? "the number of samples" : "the number of features");
  const std::size_t total = static_cast<std::size_t>(major) * static_cast<std::size_t>(mo);
  m.offsets.resize(static_cast<std::size_t>(major) + 1);
  m.indices.resize(total);
  m.values.resize(total);
  // offset (d values, one per feature): the entries are x - offset[feature] in float64, the centred copy X - offset
  // that the estimators' intercept needs, made here instead of in numpy (one pass, no second array as large as X);
  // everything below then reads them as float64 input (zeros, range, remainders), as it read that copy.
  const bool centred = offset != nullptr;
  const bool k64 = (std::is_same_v<T, double> || centred) && keep_lo;
  auto centred_at = [&](std::int64_t i, std::int64_t j) {  // output row i, position j
    return double(a[i * s_major + j * s_minor]) - offset[by_feature ? i : j];
  };
  auto nonzero_at = [&](std::int64_t i, std::int64_t j) {
    return centred ? centred_at(i, j) != 0.0 : a[i * s_major + j * s_minor] != T(0);
  };
  if (k64) m.values_lo.resize(total);
  // Blocks of output rows; within a block the input is read in tiles of 64 minor positions, so that both a C-order
  // (strided) and a Fortran-order (contiguous) input are read a cache line at a time. A strided input (a
  // transposing copy) takes blocks of 64 rows, so that every input line fetched serves 8 of them; contiguous input
  // keeps blocks of 16 (100,000 x 500 float64, 2 threads: C order by feature 165-172 ms with 64 rows, 217-220 ms
  // with 16; contiguous 133-136 ms with 16, 160-170 ms with 64).
  const std::int64_t kRows = s_minor == 1 ? 16 : 64, kTile = 64;
  std::atomic<std::int64_t> zeros{0}, bads{0}, tinies{0};
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, (major + kRows - 1) / kRows, 1), [&](const auto& r) {
    std::int64_t z = 0, bd = 0, tn = 0;
    for (std::int64_t b = r.begin(); b < r.end(); ++b) {
      const std::int64_t lo = b * kRows, hi = std::min(major, lo + kRows);
      for (std::int64_t t0 = 0; t0 < minor; t0 += kTile) {
        const std::int64_t t1 = std::min(minor, t0 + kTile);
        int zt = 0, bt = 0, st = 0;  // at most kRows * kTile each
        for (std::int64_t i = lo; i < hi; ++i) {
          const T* src = a + i * s_major;
          float* vo = m.values.data() + i * mo;
          float* lp = k64 ? m.values_lo.data() + i * mo : nullptr;
          index_t* io = m.indices.data() + i * mo;
          if (s_minor == 1 && !centred) {  // contiguous input (C order by sample, Fortran order by feature): vectorized
            if (k64)
              convert_stretch<T, std::is_same_v<T, double>>(src, t0, t1, vo, lp, io, zt, bt, st);
            else
              convert_stretch<T, false>(src, t0, t1, vo, lp, io, zt, bt, st);
            continue;
          }
          auto put = [&](auto x, std::int64_t j) {
            using V = decltype(x);
            zt += x == V(0);
            bt += beyond_float(x);
            vo[j] = static_cast<float>(x);
            if (k64) {
              lp[j] = values_lo_of(x);
              st += values_lo_loses_bits(x);
            }
            io[j] = static_cast<index_t>(j);
          };
          if (centred)
            for (std::int64_t j = t0; j < t1; ++j) put(centred_at(i, j), j);
          else
            for (std::int64_t j = t0; j < t1; ++j) put(src[j * s_minor], j);
        }
        z += zt;
        bd += bt;
        tn += st;
      }
      for (std::int64_t i = lo; i < hi; ++i) {
        m.offsets[static_cast<std::size_t>(i) + 1] = (i + 1) * mo;
        if (extra) {
          m.values[static_cast<std::size_t>(i * mo + minor)] = static_cast<float>(bias);
          if (k64) m.values_lo[static_cast<std::size_t>(i * mo + minor)] = values_lo_of(bias);
          m.indices[static_cast<std::size_t>(i * mo + minor)] = static_cast<index_t>(minor);
        }
      }
    }
    zeros += z;
    bads += bd;
    tinies += tn;
  });
  m.offsets[0] = 0;
  bad = bads.load();
  if (zeros.load() == 0) {
    settle_values_lo(m, tinies.load() > 0);
    return m;
  }
  // Zeros: count the nonzeros per row, then copy them in parallel (the test is on the input's own values, centred
  // where an offset is given).
  CsrMatrix c;
  c.n_rows = m.n_rows;
  c.n_cols = m.n_cols;
  c.offsets.assign(static_cast<std::size_t>(major) + 1, 0);
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, major, 64), [&](const auto& r) {
    for (std::int64_t i = r.begin(); i < r.end(); ++i) {
      offset_t k = extra;
      for (std::int64_t j = 0; j < minor; ++j) k += nonzero_at(i, j);
      c.offsets[static_cast<std::size_t>(i) + 1] = k;
    }
  });
  std::partial_sum(c.offsets.begin(), c.offsets.end(), c.offsets.begin());
  c.indices.resize(static_cast<std::size_t>(c.nnz()));
  c.values.resize(static_cast<std::size_t>(c.nnz()));
  if (k64) c.values_lo.resize(static_cast<std::size_t>(c.nnz()));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, major, 64), [&](const auto& r) {
    for (std::int64_t i = r.begin(); i < r.end(); ++i) {
      offset_t k = c.offsets[static_cast<std::size_t>(i)];
      for (std::int64_t j = 0; j < minor; ++j)
        if (nonzero_at(i, j)) {
          c.indices[static_cast<std::size_t>(k)] = static_cast<index_t>(j);
          c.values[static_cast<std::size_t>(k)] = m.values[static_cast<std::size_t>(i * mo + j)];
          if (k64) c.values_lo[static_cast<std::size_t>(k)] = m.values_lo[static_cast<std::size_t>(i * mo + j)];
          ++k;
        }
      if (extra) {
        c.indices[static_cast<std::size_t>(k)] = static_cast<index_t>(minor);
        c.values[static_cast<std::size_t>(k)] = static_cast<float>(bias);
        if (k64) c.values_lo[static_cast<std::size_t>(k)] = values_lo_of(bias);
      }
    }
  });
  settle_values_lo(c, tinies.load() > 0);
  return c;
}

/// Compressed arrays (scipy CSR of X, or CSC of X = CSR of X^T when `csc`) -> CsrMatrix of X.
/// Indices must be sorted and unique within each compressed vector (scipy's canonical format; the Python
/// side calls sort_indices / sum_duplicates first). Explicit zeros are kept (they change nothing).
template <class I, class P, class T>
CsrMatrix csr_from_compressed(const P* indptr, const I* idx, const T* val, std::int64_t n_major,
                              std::int64_t n_minor, bool csc, bool keep_transposed, bool keep_lo) {
  CsrMatrix m;
  m.n_rows = checked_dim(n_major, csc ? "the number of features" : "the number of samples");
  m.n_cols = checked_dim(n_minor, csc ? "the number of samples" : "the number of features");
  if (indptr[0] != 0) throw InvalidArgument("sparse matrix: indptr[0] must be 0");
  const auto nnz = static_cast<offset_t>(indptr[n_major]);
  m.offsets.resize(static_cast<std::size_t>(n_major) + 1);
  m.indices.resize(static_cast<std::size_t>(nnz));
  m.values.resize(static_cast<std::size_t>(nnz));
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n_major + 1, 4096), [&](const auto& r) {
    for (std::int64_t i = r.begin(); i < r.end(); ++i) m.offsets[static_cast<std::size_t>(i)] = static_cast<offset_t>(indptr[i]);
  });
  tbb::parallel_for(tbb::blocked_range<offset_t>(0, nnz, 1 << 14), [&](const auto& r) {
    for (offset_t k = r.begin(); k < r.end(); ++k) {
      m.indices[static_cast<std::size_t>(k)] = static_cast<index_t>(idx[k]);
      m.values[static_cast<std::size_t>(k)] = static_cast<float>(val[k]);
    }
  });
  if constexpr (std::is_same_v<T, double>)
    if (keep_lo) set_values_lo(m, val);  // float64 input: what float32 drops
  validate(m, "sparse matrix");
  if (csc && !keep_transposed) m = transpose(m);  // validate() above checked X^T; its transpose is X
  return m;
}

/// The matrix handed to train(): samples as rows, or X^T (by_feature: features as rows, Dataset::by_feature) for the
/// primal-only models; float32 values (as Snap ML stores its data).
struct Matrix {
  CsrMatrix X;
  bool by_feature = false;
  std::int64_t bad_values = 0;  ///< dense input: entries NaN, infinite, beyond float32 range or (float64 input)
                                ///< nonzero below its normal range (csr_from_dense, beyond_float)
  double bias_column = -1;      ///< >= 0: X's last column is the bias column of this value (Dataset::bias_included)
};

template <class T>
using Dense = nb::ndarray<const T, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
template <class T>
using DenseF = nb::ndarray<const T, nb::ndim<2>, nb::f_contig, nb::device::cpu>;
/// matrix_from_dense's offset: one float64 value per feature.
using Offsets = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class T>
using Vec = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class I, class P, class T>
Matrix from_compressed_typed(const Vec<P>& indptr, const Vec<I>& indices, const Vec<T>& data, std::int64_t n_rows,
                             std::int64_t n_cols, bool csc, bool by_feature, bool float64) {
  const std::int64_t n_major = csc ? n_cols : n_rows, n_minor = csc ? n_rows : n_cols;
  if (static_cast<std::int64_t>(indptr.shape(0)) != n_major + 1)
    throw InvalidArgument("sparse matrix: indptr has the wrong length");
  if (indices.shape(0) != data.shape(0)) throw InvalidArgument("sparse matrix: indices and data differ in length");
  const P* ip = indptr.data();
  if (static_cast<std::size_t>(ip[n_major]) > indices.shape(0))
    throw InvalidArgument("sparse matrix: indptr points past the end of indices");
  Matrix m;
  m.by_feature = csc && by_feature;  // a CSC matrix is already X^T: kept as it is for the primal-only models
  {
    nb::gil_scoped_release nogil;
    m.X = csr_from_compressed(ip, indices.data(), data.data(), n_major, n_minor, csc, m.by_feature, float64);
  }
  return m;
}

void copy_history(nb::dict& out, const std::vector<EpochRecord>& h) {
  nb::list l;
  for (const EpochRecord& r : h) {
    nb::dict d;
    d["epoch"] = r.epoch;
    d["seconds"] = r.seconds;
    d["primal"] = r.primal;
    d["dual"] = r.dual;
    d["gap"] = r.gap;
    d["rel_gap"] = r.rel_gap;
    if (r.passes > 0) d["passes"] = r.passes;  // the Newton solver's passes over the data
    l.append(d);
  }
  out["history"] = l;
}

nb::dict model_to_dict(const LinearModel& m) {
  nb::dict d;
  d["solver_type"] = m.solver_type;
  d["nr_class"] = m.nr_class;
  d["labels"] = to_numpy(std::vector<double>(m.labels));
  d["nr_feature"] = m.nr_feature;
  d["bias"] = m.bias;
  d["model"] = m.model;
  d["penalty"] = m.penalty;
  d["lambda"] = m.lambda;
  d["l1_ratio"] = m.l1_ratio;
  d["n_samples"] = m.n_samples;
  d["zero_based"] = m.zero_based;  // (a CLI model of a zero-based file keeps it through load_model / save_model)
  d["formulation"] = m.formulation;
  d["primal"] = to_numpy(std::vector<double>(m.primal));
  d["dual"] = to_numpy(std::vector<double>(m.dual));
  d["gap"] = to_numpy(std::vector<double>(m.gap));
  const auto nc = static_cast<std::size_t>(m.n_columns());
  d["w"] = to_numpy(std::vector<double>(m.w), {static_cast<std::size_t>(m.n_rows()), nc});
  return d;
}

template <class T>
std::vector<T> seq(nb::handle h) {
  std::vector<T> v;
  for (nb::handle x : h) v.push_back(nb::cast<T>(x));
  return v;
}

LinearModel model_from_dict(const nb::dict& d) {
  LinearModel m;
  m.solver_type = nb::cast<std::string>(d["solver_type"]);
  m.nr_class = nb::cast<int>(d["nr_class"]);
  m.labels = seq<double>(d["labels"]);
  m.nr_feature = nb::cast<index_t>(d["nr_feature"]);
  m.bias = nb::cast<double>(d["bias"]);
  m.model = nb::cast<std::string>(d["model"]);
  m.penalty = nb::cast<std::string>(d["penalty"]);
  m.lambda = nb::cast<double>(d["lambda"]);
  m.l1_ratio = nb::cast<double>(d["l1_ratio"]);
  if (d.contains("n_samples")) m.n_samples = nb::cast<std::int64_t>(d["n_samples"]);
  if (d.contains("zero_based")) m.zero_based = nb::cast<bool>(d["zero_based"]);
  m.formulation = nb::cast<std::string>(d["formulation"]);
  m.primal = seq<double>(d["primal"]);
  m.dual = seq<double>(d["dual"]);
  m.gap = seq<double>(d["gap"]);
  m.w = seq<double>(d["w"]);  // flat, row-major n_rows x n_columns
  if (m.w.size() != static_cast<std::size_t>(m.n_rows()) * static_cast<std::size_t>(m.n_columns()))
    throw InvalidArgument("model: w has the wrong size");
  return m;
}

/// The Python spelling of TrainOptions (the estimators set these by name): strings parsed into the typed
/// TrainOptions by typed() at the call of train(). Numeric defaults are TrainOptions' own.
struct PyTrainOptions {
  std::string model = "logistic", penalty, formulation = "auto", solver = "auto", device = "cpu", accel_memory;
  std::optional<double> C, lambda;
  TrainOptions base;  ///< the typed fields set directly (tol, max_epochs, seed, bias, l1_ratio, threads, ...)

  TrainOptions typed() const {
    TrainOptions o = base;
    o.problem.model = model_spec(model, penalty);
    o.problem.C = C;
    o.problem.lambda = lambda;
    o.problem.formulation = parse_formulation(formulation);
    o.solver.solver = parse_solver_kind(solver);
    o.device.device = device == "auto" ? std::nullopt : std::optional<Device>(parse_device(device));
    o.device.accel_memory = accel_memory.empty() ? MemoryBudget{} : parse_memory_budget(accel_memory);
    return o;
  }
};

/// train_py's result: the model fields and the report of every weight column.
nb::dict result_dict(const TrainResult& res) {
  nb::dict out = model_to_dict(res.model);
  out["converged"] = res.converged;
  out["interrupted"] = res.interrupted;
  out["seconds"] = res.seconds;
  out["resolved_lambda"] = res.lambda;
  out["formulation_reason"] = res.formulation_reason;
  out["solver"] = res.solver == SolverKind::automatic ? std::string("duhl") : std::string(solver_kind_name(res.solver));
  nb::list cols;
  for (const ColumnReport& c : res.columns) {
    nb::dict d;
    d["label"] = c.label;
    d["primal"] = c.certificate.primal;
    d["dual"] = c.certificate.dual;
    d["gap"] = c.certificate.gap;
    d["epochs"] = c.epochs;
    d["converged"] = c.converged;
    d["stalled"] = c.stalled;  // empty, or why the fit stopped without measurable progress (epoch_driver.hpp)
    d["seconds"] = c.seconds;
    d["alpha"] = to_numpy(std::vector<double>(c.alpha));  // the coordinate variables: a warm start
    if (c.screened >= 0)  // features proved zero by gap-safe screening; None: the solver does not screen
      d["screened"] = c.screened;
    else
      d["screened"] = nb::none();
    copy_history(d, c.history);
    cols.append(d);
  }
  out["columns"] = cols;
  return out;
}

/// The fits of train_py and train_path_py: train() on (m, y) once per entry of `lambdas` (nullopt: the options' own
/// C / lambda), each with the GIL released, the next warm-started from the previous one's coordinate variables (the
/// first from initial_alpha: one array per weight column, ColumnReport::alpha). Ctrl-C is checked once per epoch.
/// m's matrix is moved into the Dataset and back, so no copy is made. Returns train()'s dict per fit.
nb::list fit_sequence(Matrix& m, Vec<double> y, TrainOptions o, std::optional<std::vector<Vec<double>>> initial_alpha,
                      const std::vector<std::optional<double>>& lambdas) {
  if (initial_alpha)
    for (const Vec<double>& a : *initial_alpha) o.initial_alpha.emplace_back(a.data(), a.data() + a.shape(0));
  Dataset data;
  data.source = "training data";
  data.by_feature = m.by_feature;
  if (m.bias_column >= 0) {
    if (o.problem.bias != m.bias_column)
      throw InvalidArgument(fmt::format("the matrix carries a bias column of value {} but options.bias is {}",
                                        m.bias_column, o.problem.bias));
    data.bias_included = true;
  }
  data.y.assign(y.data(), y.data() + y.shape(0));
  std::unique_ptr<nb::python_error> pending;  // KeyboardInterrupt (or whatever a signal handler raised)
  o.solver.should_stop = [&pending]() {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      pending = std::make_unique<nb::python_error>();
      return true;
    }
    return false;
  };
  auto& X = m.X;
  data.X = std::move(X);
  struct Restore {
    Dataset& d;
    CsrMatrix& x;
    ~Restore() { x = std::move(d.X); }
  } restore{data, X};
  nb::list out;
  for (const std::optional<double>& lam : lambdas) {
    if (lam) {
      o.problem.C.reset();
      o.problem.lambda = *lam;
    }
    TrainResult res;
    {
      nb::gil_scoped_release nogil;
      res = train(data, o);
    }
    if (pending) throw *pending;
    out.append(result_dict(res));
    o.initial_alpha.clear();
    for (ColumnReport& c : res.columns) o.initial_alpha.push_back(std::move(c.alpha));
  }
  return out;
}

/// train() with the GIL released; Ctrl-C is checked once per epoch.
nb::dict train_py(Matrix& m, Vec<double> y, const PyTrainOptions& options_in,
                  std::optional<Vec<double>> sample_weight, bool verbose,
                  std::optional<std::vector<Vec<double>>> initial_alpha) {
  TrainOptions o = options_in.typed();
  if (sample_weight)
    o.problem.sample_weight.assign(sample_weight->data(), sample_weight->data() + sample_weight->shape(0));
  if (verbose) {
    o.on_epoch = [](int column, double label, const EpochRecord& r) {
      nb::gil_scoped_acquire gil;
      // Regression columns have no label (NaN): their lines name no column.
      const nb::str head =
          std::isnan(label) ? nb::str("[hetglm] ") : nb::str("[hetglm] column {} label {} ").format(column, label);
      nb::print(nb::str("{}epoch {} primal {:.10g} gap {:.3e} rel_gap {:.3e} {:.3f}s")
                    .format(head, r.epoch, r.primal, r.gap, r.rel_gap, r.seconds));
    };
  }
  return nb::cast<nb::dict>(fit_sequence(m, y, std::move(o), std::move(initial_alpha), {std::nullopt})[0]);
}

/// A regularization path: train() at every lambda of `lambdas` in order, each fit warm-started from the previous
/// one (the first from initial_alpha, or cold), with one PathCache for the whole path (the working-set solver's
/// column norms and X^T y computed once).
nb::list train_path_py(Matrix& m, Vec<double> y, const PyTrainOptions& options_in, const std::vector<double>& lambdas,
                       std::optional<std::vector<Vec<double>>> initial_alpha) {
  TrainOptions o = options_in.typed();
  o.solver.path_cache = std::make_shared<PathCache>();
  const std::vector<std::optional<double>> each(lambdas.begin(), lambdas.end());
  return fit_sequence(m, y, std::move(o), std::move(initial_alpha), each);
}

}  // namespace
}  // namespace hetglm::py

NB_MODULE(_hetglm, m) {
  using namespace hetglm;
  using namespace hetglm::py;
  m.doc() = "hetglm engine bindings (use the estimators in the hetglm package)";
  m.attr("__version__") = HETGLM_VERSION;
  m.attr("backends") = HETGLM_BACKENDS;
  // Tolerances below this train the Newton and coordinate-descent solvers on float64 input's float64 values
  // (forms.hpp kFloat64Tol).
  m.attr("float64_tol") = kFloat64Tol;
  m.attr("min_tol") = kMinTol;  // the smallest tol train() accepts (check_options)
  m.def("memory_limit", [] {
    const MemoryLimit l = memory_limit();
    return nb::make_tuple(l.bytes, l.source);
  }, "(bytes, source): what this process can still allocate (cgroup limits and MemAvailable; 0 = unknown), as the "
     "readers bound what they keep (memory.hpp).");
  m.def("format_bytes", [](std::uint64_t b) { return format_bytes(b); }, "1500000000 -> '1.5 GB' (memory.hpp).");

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ParseError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const UnsupportedDevice& e) {  // a device not compiled in or not present: the user's choice
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const MemoryLimitError& e) {  // a reader's bound on what it keeps (read_file, the model reader)
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const IoError& e) {
      const std::string msg = e.what();
      PyErr_SetString(msg.find("No such file or directory") != std::string::npos ? PyExc_FileNotFoundError
                                                                                 : PyExc_OSError,
                      e.what());
    } catch (const Error& e) {  // TrainingError and any other engine error
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  nb::class_<Matrix>(m, "Matrix",
                     "Samples x features in CSR form with float32 values (the engine's storage, as Snap ML), plus, "
                     "for float64 input, what float32 rounding drops of each value (float64: the primal Newton "
                     "solver trains on the float64 values).")
      .def_prop_ro("shape", [](const Matrix& a) {
        return a.by_feature ? nb::make_tuple(a.X.n_cols, a.X.n_rows) : nb::make_tuple(a.X.n_rows, a.X.n_cols);
      })
      .def_prop_ro("nnz", [](const Matrix& a) { return a.X.nnz(); })
      .def_prop_ro("float64", [](const Matrix& a) { return a.X.has_lo(); },
                   "True when the input was float64 and some value is not a float32: the matrix keeps the rest.")
      .def_prop_ro("by_feature", [](const Matrix& a) { return a.by_feature; })
      .def_prop_ro("bias_column", [](const Matrix& a) { return a.bias_column; },
                   "-1, or the value of the bias column the conversion appended (matrix_from_dense's bias).")
      .def_prop_ro("bad_values", [](const Matrix& a) { return a.bad_values; },
                   "Entries of a dense input that are NaN, infinite or beyond float32 range (0 for sparse input: "
                   "the estimators check those in numpy).");

  // Dense arrays in C or Fortran order, float64 or float32 (nanobind tries the overloads in order; noconvert: an
  // array that fits none raises TypeError instead of being copied silently).
#define HETGLM_FROM_DENSE(ARRAY, T, C_ORDER)                                                                       \
  m.def("matrix_from_dense", [](ARRAY<T> a, bool by_feature, double bias, bool float64,                          \
                                 std::optional<Offsets> offset) {                                                 \
    Matrix r;                                                                                                      \
    r.by_feature = by_feature;                                                                                     \
    r.bias_column = bias >= 0 ? bias : -1;                                                                         \
    const auto n = static_cast<std::int64_t>(a.shape(0)), d = static_cast<std::int64_t>(a.shape(1));               \
    if (offset && static_cast<std::int64_t>(offset->shape(0)) != d)                                                \
      throw InvalidArgument(fmt::format("matrix_from_dense: offset has {} values for {} features",                 \
                                        offset->shape(0), d));                                                    \
    const double* off = offset ? offset->data() : nullptr;                                                         \
    nb::gil_scoped_release nogil;                                                                                  \
    r.X = C_ORDER ? csr_from_dense(a.data(), n, d, d, 1, by_feature, r.bad_values, bias, float64, off)             \
                  : csr_from_dense(a.data(), n, d, 1, n, by_feature, r.bad_values, bias, float64, off);            \
    return r;                                                                                                      \
  }, "a"_a.noconvert(), "by_feature"_a = false, "bias"_a = -1.0, "float64"_a = true,                             \
  "offset"_a = nb::none(),                                                                                         \
  "Dense (n, d) array (C or Fortran order, float64 or float32) -> Matrix (zeros dropped, float32 values and, "  \
  "for float64 input, their float64 remainders); "                                                               \
  "by_feature: store X^T (features as rows) for the primal-only models (Lasso, ElasticNet); bias >= 0: append "  \
  "the bias column (LIBLINEAR's -B; train() then needs options.bias equal to it and adds none itself); float64 "  \
  "= False: float32 values alone for float64 input too (the estimators at a tol the float64 values do not serve); " \
  "offset (d float64 values): convert X - offset (each feature's value minus its offset, in float64), the "       \
  "centred X of an intercept, as a float64 array X - offset would convert (bad_values counted on those values).")
  HETGLM_FROM_DENSE(Dense, double, true);
  HETGLM_FROM_DENSE(Dense, float, true);
  HETGLM_FROM_DENSE(DenseF, double, false);
  HETGLM_FROM_DENSE(DenseF, float, false);
#undef HETGLM_FROM_DENSE

#define HETGLM_FROM_COMPRESSED(I, P, T)                                                                    \
  m.def("matrix_from_compressed", &from_compressed_typed<I, P, T>, "indptr"_a.noconvert(),                  \
        "indices"_a.noconvert(), "data"_a.noconvert(), "n_rows"_a, "n_cols"_a, "csc"_a, "by_feature"_a = false, \
        "float64"_a = true)
  HETGLM_FROM_COMPRESSED(std::int32_t, std::int32_t, double);
  HETGLM_FROM_COMPRESSED(std::int32_t, std::int32_t, float);
  HETGLM_FROM_COMPRESSED(std::int64_t, std::int64_t, double);
  HETGLM_FROM_COMPRESSED(std::int64_t, std::int64_t, float);
  HETGLM_FROM_COMPRESSED(std::int32_t, std::int64_t, double);
  HETGLM_FROM_COMPRESSED(std::int32_t, std::int64_t, float);
#undef HETGLM_FROM_COMPRESSED

  // TrainOptions in the Python spelling (PyTrainOptions): the names the estimators set, parsed at train().
  nb::class_<PyTrainOptions>(m, "TrainOptions", "hetglm::TrainOptions (bindings/train/include/hetglm/train.hpp)")
      .def(nb::init<>())
      .def_rw("model", &PyTrainOptions::model)
      .def_rw("penalty", &PyTrainOptions::penalty)
      .def_rw("C", &PyTrainOptions::C)
      .def_rw("lambda_", &PyTrainOptions::lambda)
      .def_rw("formulation", &PyTrainOptions::formulation)
      .def_rw("solver", &PyTrainOptions::solver,
              "auto | newton | sequential | syscd | passcode-atomic | passcode-wild (options.hpp)")
      .def_rw("device", &PyTrainOptions::device)
      .def_rw("accel_memory", &PyTrainOptions::accel_memory)
      .def_prop_rw("l1_ratio", [](const PyTrainOptions& o) { return o.base.problem.l1_ratio; },
                   [](PyTrainOptions& o, double v) { o.base.problem.l1_ratio = v; })
      .def_prop_rw("bias", [](const PyTrainOptions& o) { return o.base.problem.bias; },
                   [](PyTrainOptions& o, double v) { o.base.problem.bias = v; })
      .def_prop_rw("classes", [](const PyTrainOptions& o) { return o.base.problem.classes; },
                   [](PyTrainOptions& o, std::vector<double> v) { o.base.problem.classes = std::move(v); },
                   "classifiers: the classes to train, ascending (ProblemOptions::classes; empty: those of y)")
      .def_prop_rw("class_weights", [](const PyTrainOptions& o) { return o.base.problem.class_weights; },
                   [](PyTrainOptions& o, std::vector<std::pair<double, double>> v) {
                     o.base.problem.class_weights = std::move(v);
                   },
                   "classifiers: (label, weight) pairs applied as LIBLINEAR does (ProblemOptions::class_weights: "
                   "two classes and multinomial per sample, one-vs-rest each column's positives only)")
      .def_prop_rw("tol", [](const PyTrainOptions& o) { return o.base.solver.tol; },
                   [](PyTrainOptions& o, double v) { o.base.solver.tol = v; })
      .def_prop_rw("max_epochs", [](const PyTrainOptions& o) { return o.base.solver.max_epochs; },
                   [](PyTrainOptions& o, int v) { o.base.solver.max_epochs = v; })
      .def_prop_rw("seed", [](const PyTrainOptions& o) { return o.base.solver.seed; },
                   [](PyTrainOptions& o, std::uint64_t v) { o.base.solver.seed = v; })
      .def_prop_rw("n_threads", [](const PyTrainOptions& o) { return o.base.solver.n_threads; },
                   [](PyTrainOptions& o, int v) { o.base.solver.n_threads = v; })
      .def_prop_rw("deterministic", [](const PyTrainOptions& o) { return o.base.solver.deterministic.value_or(true); },
                   [](PyTrainOptions& o, bool v) { o.base.solver.deterministic = v; });

  m.def("check_training_memory",
        [](double n, double d, double nnz, int n_threads) { check_training_memory(n, d, nnz, 1, n_threads); },
        "n_samples"_a, "n_features"_a, "nnz"_a, "n_threads"_a,
        "train()'s memory estimate for one weight column (hetglm::check_training_memory): ValueError 'training needs "
        "about X GB of memory (...), more than the Y GB available' when it does not fit.");
  m.def("train", &train_py, "matrix"_a, "y"_a.noconvert(), "options"_a, "sample_weight"_a.noconvert() = nb::none(),
        "verbose"_a = false, "initial_alpha"_a = nb::none(),
        "Train (hetglm::train). y: float64 (n,), labels or targets; sample_weight: float64 (n,) or None (the c_i "
        "of P(w) = (1/n) sum_i c_i loss + lambda R(w)). Returns a dict: the model fields (w as n_rows x n_columns, "
        "bias row last), converged, interrupted, seconds, resolved_lambda, formulation_reason, solver (the CPU solver "
        "that ran, 'duhl' on an accelerator), and per weight column its certificate, "
        "epochs, history and alpha (its coordinate variables: dual per sample, primal w). initial_alpha: a list of "
        "float64 arrays, one per weight column, from a previous fit on the same data and formulation (a warm start). Raises ValueError (bad options or data), RuntimeError (training failure), "
        "KeyboardInterrupt (Ctrl-C, polled once per epoch).");

  m.def("train_path", &train_path_py, "matrix"_a, "y"_a.noconvert(), "options"_a, "lambdas"_a,
        "initial_alpha"_a = nb::none(),
        "A regularization path: train() at every lambda of `lambdas` (float, in the order given), each fit "
        "warm-started from the previous one (the first from initial_alpha, as train()'s), the working-set solver's "
        "lambda-independent quantities computed once (PathCache). Returns a list with train()'s dict for every "
        "lambda. Raises as train() does.");
  m.def("save_model", [](const std::string& path, const nb::dict& d) { save_model(path, model_from_dict(d)); },
        "path"_a, "model"_a, "Write a model dict in the CLI's model format (atomically).");
  m.def("load_model", [](const std::string& path) { return model_to_dict(load_model(path)); }, "path"_a,
        "Read a model file written by the CLI or save_model; returns the model dict.");
  m.def("format_model", [](const nb::dict& d) { return format_model(model_from_dict(d)); }, "model"_a);

  bind_svmlight(m);
}
