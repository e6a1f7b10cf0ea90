// SPDX-License-Identifier: Apache-2.0
// The parallel CPU solvers (oneTBB): SySCD and the PASSCoDe baselines. Algorithm, NUMA layout and determinism
// rules: docs/parallel-cpu.md.
//
// SySCD -- Ioannou, Mendler-Duenner, Parnell, "SySCD: A System-Aware Parallel Coordinate Descent Algorithm",
// NeurIPS 2019 (arXiv 1911.07722; docs/algorithms.md, "SySCD: the parallel CPU solver"). Each epoch:
//   coordinates, in one seeded random order, are grouped into buckets of consecutive ones; buckets are statically
//   split across K NUMA nodes; inside each node a fresh random permutation of the node's buckets is cut into one
//   list per thread (dynamic re-partitioning); thread t runs coordinate steps on its own replica v_t of the shared
//   vector with the CoCoA+ scaling sigma' = T (the number of replicas; gamma = 1, "adding": Ma et al., ICML 2015,
//   eq. (10)):
//     a_new = Form::coordinate_step(i, alpha_i, v_t, sigma'),  v_t += sigma' (a_new - alpha_i) a_i,
//   then the replicas are reduced in two levels (threads -> node replica -> v), in parallel over ranges of v:
//     v += sum_t (v_t - v) / sigma'.
// PASSCoDe -- Hsieh, Yu, Dhillon, ICML 2015: one shared v, sigma' = 1; `atomic` adds with
// std::atomic_ref<double>::fetch_add, `wild` with a relaxed atomic load and a relaxed store (lost updates are
// possible; data-race-free, so ThreadSanitizer-clean).
// Certificates: the duality gap is computed in parallel (parallel_certificate) every epoch; v is re-synchronized
// as A alpha in double (parallel_shared_vector) every epoch for wild, and for the others when the gap claims
// convergence, every 10 epochs and at the end, so the returned certificate is exact for the returned model in
// every mode (for wild the model is the one recomputed from alpha).
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "hetglm/solvers/options.hpp"

namespace hetglm {

/// Runs options.solver on `form` from alpha = 0 with options.n_threads threads (0: the concurrency of the current
/// oneTBB arena). It runs in the caller's arena when that arena's concurrency equals min(n_threads, cores) (the
/// process's one arena, docs/conventions.md, "Threads"), else in an arena of that size; n_threads > cores still makes n_threads
/// replicas (logical threads), executed by the available cores. SolverKind::sequential calls solve_sequential.
/// Returns the same SolveResult as solve_sequential: certificate exact for (alpha, v = A alpha), history per epoch.
/// Throws InvalidArgument for negative n_threads, numa_nodes or bucket_size, or `deterministic` with a PASSCoDe
/// solver (its updates race by design); TrainingError if the objective becomes NaN or infinite.
/// Deterministic mode (syscd): the same seed and n_threads give bit-identical alpha, w and certificates.
template <class Form>
SolveResult solve_parallel_cpu(const Form& form, const SolverOptions& options);

/// Certificate of (alpha, v) -- the same quantities as Form::certificate -- computed in parallel in the current
/// arena: partial sums over fixed chunks of 2048 coordinates (and of v's entries), added in chunk order, so the
/// result is deterministic and does not depend on the thread count or the schedule.
/// alpha: n_coords() values; v: dim() values, should equal A alpha.
/// gaps (optional, size n_coords): each coordinate's share of P - D; inners (optional, size n_coords): each
/// coordinate's <a_i, v> (the box duals' margin rule of shrinking).
template <class Form>
Certificate parallel_certificate(const Form& form, std::span<const double> alpha, std::span<const double> v,
                                 double* gaps = nullptr, double* inners = nullptr);
/// The coordinates' certificate terms of parallel_certificate alone (forms.hpp coordinate_terms over every
/// coordinate, the same fixed chunks in chunk order): the local part of a CoCoA+ rank's certificate (cocoa.cpp) when
/// the rank has threads. With `v2`, each coordinate's <a_i, v2> goes to inners2 too (coordinate_terms).
template <class Form>
CertificateTerms parallel_coordinate_terms(const Form& form, const double* alpha, const double* v,
                                           double* gaps = nullptr, double* inners = nullptr,
                                           const double* v2 = nullptr, double* inners2 = nullptr);

/// v = A alpha in double (as shared_vector), in parallel: rows of A are cut into `n_parts` chunks of about equal
/// nonzeros, each scattered into its own buffer, and the buffers are summed in chunk order over ranges of v. The
/// result depends on n_parts but never on the schedule. Returns dim() values.
template <class Form>
std::vector<double> parallel_shared_vector(const Form& form, std::span<const double> alpha, int n_parts);

/// SySCD's epochs as the local solver of a CoCoA+ rank (cocoa.hpp; docs/mpi.md, "The hierarchy: ranks x threads").
/// The rank's subproblem is itself a CoCoA+ problem: its quadratic term is outer_sigma times that of the global one,
/// so T thread replicas, each adding its updates, need sigma'' = T on top of it: every coordinate step takes
/// sigma' = outer_sigma x T (the additive, gamma = 1 choice of Ma et al. 2015 for outer_sigma x T blocks), a replica
/// sees its own updates scaled by that, and each epoch's merge adds outer_sigma x (A delta alpha of the epoch) to
/// the rank's local copy of v, which is how the sequential local solver's copy sees its own updates. No
/// certificate or aggregation search inside (the rank's round does those), and the shrinking is the round's choice
/// (set_active). The coordinates are put into
/// one seeded random order once, as solve_parallel_cpu does (listed, or a copy of the rank's matrix for short rows).
template <class Form>
class SyscdLocalSolver {
 public:
  /// options: n_threads (>= 1: the replicas), seed, bucket_size, numa_nodes, deterministic (default true).
  SyscdLocalSolver(const Form& form, const SolverOptions& options, double outer_sigma);
  ~SyscdLocalSolver();
  SyscdLocalSolver(const SyscdLocalSolver&) = delete;
  SyscdLocalSolver& operator=(const SyscdLocalSolver&) = delete;
  /// sigma' of every coordinate step: outer_sigma x threads.
  double step_sigma() const;
  /// `epochs` epochs on this rank's alpha (n_coords values, original order) against v_loc (dim values, the
  /// rank's local copy of v, updated as described above).
  void run(std::span<double> alpha, std::span<double> v_loc, int epochs);
  /// The coordinates the next run()s visit (indices of the rank's coordinates, at least one, each at most once; the
  /// rank's shrinking, cocoa.cpp): the others keep their alpha_i. All of them until the first call.
  void set_active(std::span<const index_t> coords);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hetglm
