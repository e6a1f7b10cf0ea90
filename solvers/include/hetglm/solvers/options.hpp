// SPDX-License-Identifier: Apache-2.0
// Options and results shared by the solvers. The default of every option is the member initializer here: the
// library, the CLI and the Python package take it from this one place (docs/conventions.md, "Objective and scaling").
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hetglm/solvers/forms.hpp"

namespace hetglm {

/// One row of the training history (one per epoch at which the gap was computed).
struct EpochRecord {
  int epoch = 0;          ///< epochs completed
  double seconds = 0;     ///< wall time since the start of this solve
  double primal = 0;      ///< P(w)
  double dual = 0;        ///< D(alpha)
  double gap = 0;         ///< P - D (absolute)
  double rel_gap = 0;     ///< (P - D) / |P|, the quantity compared with tol
  std::int64_t passes = 0;  ///< Newton solver: passes over the data so far (each read of every stored entry of X
                            ///< or X^T: derivatives, CG products, inner epochs, v = X w); 0 from the other solvers
};

/// Which CPU solver runs (parallel_cpu.hpp, newton.hpp; docs/parallel-cpu.md, docs/formulation.md).
/// CLI: --solver auto|newton|working-set|sequential|syscd|passcode-atomic|passcode-wild.
enum class SolverKind {
  sequential,       ///< the reference (sequential.hpp)
  syscd,            ///< SySCD: buckets, per-thread replicas of v with sigma' = #replicas, NUMA-aware
  passcode_atomic,  ///< PASSCoDe baseline: one shared v, atomic fetch_add updates
  passcode_wild,    ///< PASSCoDe baseline: one shared v, relaxed atomic load + store (updates may be lost)
  newton,           ///< primal Newton with inner coordinate descent (newGLMNET; newton.hpp), primal formulation only
  automatic,        ///< train() picks: newton for the primal formulation of logistic / squared hinge, working_set
                    ///< for the Lasso and elastic net, otherwise sequential when n_threads == 1 and syscd else (the
                    ///< default)
  working_set       ///< primal coordinate descent on working sets with gap-safe screening and extrapolation
                    ///< (working_set.hpp), penalties with an L1 part only
};

/// "auto" | "newton" | "working-set" | "sequential" | "syscd" | "passcode-atomic" | "passcode-wild" -> SolverKind;
/// throws InvalidArgument "--solver: unknown solver 'x' (expected auto, newton, working-set, sequential, syscd,
/// passcode-atomic or passcode-wild)".
SolverKind parse_solver_kind(std::string_view name);
/// The CLI spelling of a solver kind (inverse of parse_solver_kind).
std::string_view solver_kind_name(SolverKind kind);

/// What a regularization path (train_path, bindings/train) carries from one point to the next besides the warm
/// start: the quantities of the working-set solver that do not depend on lambda, computed by the first fit and
/// reused by the later ones on the same X^T (identified by its value array, shape and nonzeros) and targets:
/// the column norms ||x^(j)|| (gap-safe screening) and <x^(j), y> (the squared loss with unit weights). One pass
/// over X saved per point (the set-up of a point on 100,000 x 50,000 with 5 million nonzeros: 14.1 -> 6.3 ms), and
/// the form's column curvatures (another pass, 5 ms there); the correlation bounds of the last certificate spare the
/// next point's first certificate most of its products.
/// Not shared between threads: one path at a time per cache.
struct PathCache {
  /// Which matrix a cached quantity belongs to: its value array (the caller keeps it alive for the path), shape and
  /// nonzeros.
  struct MatrixId {
    const void* values = nullptr;
    std::int64_t rows = 0, cols = 0, nnz = 0;
    const void* values_lo = nullptr;  ///< the float64 remainders the solver reads (forms.hpp kFloat64Tol), or null
    static MatrixId of(const CsrMatrix& a, const float* lo = nullptr) {
      return {a.values.data(), a.n_rows, a.n_cols, a.nnz(), lo};
    }
    bool operator==(const MatrixId&) const = default;
  };
  MatrixId x;                    ///< the X^T of col_norm, xy and the bounds
  std::vector<double> col_norm;  ///< ||x^(j)|| per feature
  std::vector<double> y;         ///< the targets xy belongs to (empty: xy not computed)
  std::vector<double> xy;        ///< <x^(j), y> per feature
  /// The correlation bounds of the last fit (working_set.cpp, "Correlation bounds"): per feature an upper bound of
  /// |<x^(j), u>| / n at the last certified derivative vector `bound_u` (size n), kept as base + ||x^(j)|| (drift -
  /// anchor). They hold for any later u by the triangle inequality, whatever the targets or lambda.
  std::vector<double> bound_base, bound_anchor, bound_u;
  double bound_drift = 0;
  /// (1/n) sum_k c_k x_kj^2 per feature (ProblemData::column_curvature) of the X^T curvature_x, for the weights
  /// curvature_c (train()).
  MatrixId curvature_x;
  std::vector<double> curvature, curvature_c;
  int reused = 0;                ///< fits that used the cached quantities (diagnostics and tests)
  std::int64_t bound_skipped = 0;  ///< certificate products the correlation bounds spared (diagnostics and tests)
};

struct SolverOptions {
  double tol = 1e-4;                 ///< stop when P - D <= tol |P| (docs/conventions.md, "Tolerance: the relative duality gap")
  int max_epochs = 5000;             ///< epoch budget; reaching it is a warning, not a failure (hinge SDCA converges
                                     ///< as O(1/eps): LIBLINEAR-like 1000 is too few)
  std::uint64_t seed = 1;            ///< coordinate order
  SolverKind solver = SolverKind::automatic;  ///< train() resolves automatic; solve_parallel_cpu() needs a concrete kind
  int n_threads = 0;                 ///< solver threads = replicas (0 = the concurrency of the current arena)
  int numa_nodes = 0;                ///< 0 = NUMA nodes from the hwloc topology; K > 0 = K (virtual) nodes
  /// Same seed and n_threads give a bit-identical result. Unset (the default): deterministic wherever the solver can
  /// be (syscd: a static partition of the buckets to threads), while PASSCoDe races by design; true: required
  /// (InvalidArgument for PASSCoDe); false: SySCD's threads steal buckets from each other (racing).
  std::optional<bool> deterministic;
  int bucket_size = 0;               ///< coordinates per SySCD bucket (0 = automatic)
  /// Test hook: the parallel CPU solver lists the coordinates in its random order (true) or copies the rows into it
  /// (false; SySCD on real NUMA nodes always copies). Unset (the default): by the rows' length (docs/parallel-cpu.md,
  /// "One random permutation"). Both visit the same coordinates in the same sequence.
  std::optional<bool> listed_order;
  /// Test hook: the multinomial proximal Newton solver's direction by its features' K x K blocks (true) or
  /// coordinate by coordinate (false). Unset (the default): blocks where they fit in 512 MiB (multinomial.cpp
  /// proximal_direction). Both minimize the same quadratic model, to the same optimum.
  std::optional<bool> multinomial_blocks;
  /// Gap-driven shrinking of the coordinate-descent solvers (docs/parallel-cpu.md, "Shrinking and the certificate schedule"): between exact
  /// certificates train only the coordinates that hold the gap; for the hinge and squared hinge duals (sequential and
  /// SySCD) also LIBLINEAR's margin rule within each epoch ("The margin rule of the box duals").
  bool shrinking = true;
  /// SySCD with more than one replica: after the safe CoCoA+ merge, the step gamma along the merged direction by a
  /// line search on the objective (never worse than gamma = 1). docs/parallel-cpu.md, "Adaptive aggregation".
  bool adaptive_aggregation = true;
  /// SySCD with T > 1 replicas in the dual, adaptive aggregation: the replicas' sigma' (clamped to [1, T]; gamma is
  /// then searched from the safe sigma' / T up). 0 (the default): by loss, replica_sigma in aggregation.hpp.
  /// docs/parallel-cpu.md, "sigma' between 1 and T".
  double replica_sigma = 0;
  /// Exact certificates every this many epochs; 0 = the adaptive schedule (about 10% of the work, earlier when the
  /// gap predicts convergence). The stop and the returned certificate are always exact.
  int certificate_every = 0;
  /// Warm start: the coordinate variables to start from (dual: alpha per sample; primal: w per feature), e.g. a
  /// previous solve's SolveResult::alpha at another lambda (may be null: cold start from 0). Values outside the
  /// dual domain of the current labels are set to 0. Size n_coords(), else InvalidArgument.
  const std::vector<double>* initial_alpha = nullptr;
  std::function<void(const EpochRecord&)> on_epoch;  ///< progress callback (may be empty)
  /// Polled once per epoch; returning true stops the solve after the current epoch (Ctrl-C).
  std::function<bool()> should_stop;
  /// Test and diagnostic hook (may be empty): called by the sequential, parallel CPU and Newton solvers after each
  /// epoch's coordinate updates (and the replica merge), before the epoch's certificate (sequential: before its
  /// re-synchronization v = A alpha, which overwrites v), with the epoch number (1-based), the coordinate variables
  /// alpha (dual: per sample; primal: w) and the shared vector v. The robustness tests inject a NaN here
  /// (tests/robustness; docs/robustness.md). Not for production use.
  std::function<void(int epoch, std::span<double> alpha, std::span<double> v)> after_epoch;
  /// Distributed primal Newton (docs/mpi.md, "Distributed Newton"): sums a vector element-wise over the processes
  /// that each hold some of the samples (one MPI_Allreduce); empty = a single process.
  std::function<void(std::span<double>)> sum_over_ranks;
  /// A regularization path's carried quantities (PathCache; used by the working-set solver), or null.
  std::shared_ptr<PathCache> path_cache;
};

struct SolveResult {
  Certificate certificate;           ///< final, from v recomputed as A alpha
  int epochs = 0;
  bool converged = false;            ///< gap <= tol |P| reached
  bool interrupted = false;          ///< should_stop() asked to stop
  /// Not empty when the fit stopped before the tolerance because it made no measurable progress any more (the stall
  /// rule of epoch_driver.hpp, or the Newton solver's unresolvable steps): the message, which names the relative gap,
  /// the tolerance and the smallest gap reached. Like the epoch budget, a warning, not a failure.
  std::string stalled;
  double seconds = 0;
  std::vector<EpochRecord> history;
  std::vector<double> alpha;         ///< coordinate variables (dual: per sample; primal: w)
  std::vector<double> w;             ///< primal weights
  /// Features the gap-safe rule proved zero at the optimum (working-set solver: those removed during the solve,
  /// the first removal at a warm start using the warm start's dual point, plus those the final certificate's dual
  /// point rules out); -1: the solver does not screen.
  std::int64_t screened = -1;
};

/// SolverOptions::replica_sigma's values: 0 (by loss) or a finite number >= 1 (the CLI's check and the solver's).
inline bool valid_replica_sigma(double s) { return s == 0 || (s >= 1 && std::isfinite(s)); }

}  // namespace hetglm
