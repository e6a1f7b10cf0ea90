// SPDX-License-Identifier: Apache-2.0
// CoCoA+ across MPI ranks: one rank's part of the distributed solver (docs/mpi.md; docs/algorithms.md, "CoCoA+: adding local updates").
// Ma, Smith, Jaggi, Jordan, Richtarik, Takac, "Adding vs. Averaging in Distributed Primal-Dual Optimization", ICML
// 2015; Smith, Forte, Ma, Takac, Jordan, Jaggi, "CoCoA: A General Framework for Communication-Efficient Distributed
// Optimization", JMLR 18 (2018).
//
//   Rank r holds the coordinates [r] of min_alpha f(A alpha) + sum_i g_i(alpha_i) (dual: its samples; primal: its
//   block of features) and a copy of the shared vector v. Each round:
//     1. H = local_epochs epochs of the sequential solver's coordinate update (update_coordinate, forms.hpp) on the
//        rank's coordinates against a local copy of v with sigma' = K (gamma = 1, "adding"); with local_threads
//        T > 1, H epochs of SySCD on T threads instead (SyscdLocalSolver): steps with sigma' = K T, each epoch's
//        merge adds K x its A_r delta alpha_r to the local copy; the box duals (hinge, squared hinge) on the
//        sequential loop with adaptive aggregation step at sigma' = 1 instead (MergePlan, aggregation.hpp), and so
//        does the logistic dual; at K > 1 their epochs run in parts with v_loc taking a share of the other ranks'
//        part of the previous round's step after each (the lookahead; the search's grid then also holds gamma =
//        0), and the box duals also send the changes of v of three projected steps past gamma = 1 with Δv; the
//        dual's epochs (either local solver) visit only the rank's active coordinates (shrinking: at K = 1 the
//        single-process rules, SySCD without the margin rule's in-epoch drops; at K > 1 the box duals' samples that
//        MarginRule::clears leaves out sit out), chosen again after every certificate;
//     2. dv_r = A_[r] alpha_[r] (new) - A_[r] alpha_[r] (old) in double, read off the local copy of v (which took
//        the steps sigma'-scaled); one MPI_Allreduce (sum) of dv (length dim(): d in the dual, N in the primal);
//     2b. options.adaptive_aggregation and K T > 1: the new point alpha_old + gamma (alpha - alpha_old) + beta s (s the
//        previous round's step; heavy-ball momentum) by a safeguarded search on the global objective
//        (aggregation.hpp) over a fixed grid: gamma in aggregation_grid (1, (1 + S)/2, S and 8 geometric steps from
//        1/4 to S, S = K T the blocks' sigma'; also at K = 1 when T > 1; for the box duals' plan 1, (1 + 1/K)/2,
//        1/K and 8 geometric steps from 1/K to 1) times beta in kAggregationMomenta (0,
//        0.5, 0.8, 0.9, 0.95); each rank adds the terms of its changed coordinates (primal: and of its share of
//        the samples touched) at every pair, one MPI_Allreduce of those 55 sums, the dual's quadratic from the
//        global v, dv and s_v; the best pair (never worse than the plan's safe merge: (1, 0) for CoCoA+, (1/K, 0)
//        for the box duals);
//     v += gamma sum_r dv_r + beta s_v;
//     3. in the rounds of the certificate schedule (shrinking.hpp CertificateSchedule, the same rounds on every
//        rank; --certificate-every fixes them) the global certificate: each rank adds the certificate terms of its
//        coordinates and of its share of the entries of v (forms.hpp add_coordinate_terms / add_shared_terms), one
//        MPI_Allreduce of the six sums and an error flag (dual: and the loss sums of the certificate's primal point,
//        the best of the certified rounds' primal points and their mixes, best_primal.hpp), then Form::finish; the
//        epoch driver records the round and stops on P - D <= tol |P|. Other rounds agree on the ranks' error flags
//        in one MPI_Allreduce of an int.
// Compiled only with -DHETGLM_ENABLE_MPI=ON; this header itself needs no MPI.
#pragma once
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include "hetglm/solvers/options.hpp"

namespace hetglm {

struct CocoaOptions {
  int local_epochs = 1;                 ///< H: local epochs per round (--local-epochs)
  int local_threads = 1;                ///< T > 1: the local epochs run SySCD on T threads, sigma' = K T
                                        ///< (SyscdLocalSolver, parallel_cpu.hpp); 1: the sequential loop
  index_t shared_lo = 0, shared_hi = 0; ///< this rank's share [lo, hi) of the entries of v in the certificate sums
  std::vector<int> coord_counts;        ///< primal: features per rank (to gather w on rank 0)
  std::vector<int> coord_displs;
  double nnz_per_rank = 0;              ///< the ranks' mean nonzeros (bias entries included), which caps the
                                        ///< lookahead's parts (aggregation.hpp lookahead_parts); 0: no cap
  int fail_rank = -1;                   ///< test hook (HETGLM_TEST_FAIL_RANK): this rank fails in round 2
};

/// One CoCoA+ round's times (the certificate is in SolveResult::history).
struct CocoaRound {
  int round = 0;
  double seconds = 0, compute_seconds = 0, comm_seconds = 0;
  double gamma = 1;  ///< the aggregation step of the round (1 = CoCoA+'s safe merge)
  double beta = 0;   ///< the share of the previous round's step added (adaptive aggregation's momentum)
  /// coordinates this rank's local epoch started with (all of its coordinates, or fewer with shrinking)
  std::int64_t active = 0;
};

struct CocoaResult : SolveResult {
  std::vector<CocoaRound> rounds;
  double compute_seconds = 0, comm_seconds = 0;
  /// doubles each rank contributes to the allreduces of one round: dv, the certificate's 6 sums and error flag (dual:
  /// and the loss sums of its primal point, best_primal.hpp), and with adaptive aggregation the partial objectives of
  /// the trial steps
  std::size_t allreduce_doubles_per_round = 0;
  std::size_t allreduce_calls = 0, allreduce_doubles_total = 0;  ///< distributed Newton: every allreduce of the solve
};

/// Thrown on every rank when a round's error flag was raised (the failing rank has printed its own message);
/// `code` is the agreed exit code.
struct RemoteFailure {
  int code;
};

/// Exit code of an exception: TrainingError 1; other engine errors (bad input / options) 2; anything else 1.
int exit_code_of(const std::exception& e);

/// Every rank calls this at the end of a phase with its own outcome (0 = fine): a failing rank prints "error: [rank r
/// of K] msg" (only rank 0, without the rank, when `rank0_only`: a check that fails identically everywhere); rank 0
/// says "another rank failed" when only others failed. Returns the largest code of all ranks.
int agree_on_failure(int code, const std::string& msg, bool rank0_only = false);

/// Runs CoCoA+ on this rank's `form` (its coordinates; the form's 1/n is over all ranks' samples) from alpha = 0.
/// options: tol, max_epochs (= rounds), seed, on_epoch (rank 0 prints), should_stop. The returned w is the full
/// weight vector on rank 0 (dual: on every rank: the kept primal point where its P is below w(alpha)'s); certificate
/// exact for the global alpha and that w (P recomputed from the data, D from v = A alpha).
/// Throws RemoteFailure (collectively) when any rank failed in a round, TrainingError (on every rank) for a non-finite
/// global objective.
template <class Form>
CocoaResult solve_cocoa(const Form& form, const SolverOptions& options, const CocoaOptions& cocoa);

}  // namespace hetglm
