// SPDX-License-Identifier: Apache-2.0
// DuHL: duality-gap-driven heterogeneous learning (Dünner, Parnell & Jaggi, "Efficient Use of Limited-Memory
// Accelerators for Linear Learning on Heterogeneous Systems", NeurIPS 2017; docs/algorithms.md, "DuHL: a working set on a limited-memory accelerator").
//
//   min_alpha f(A alpha) + sum_i g_i(alpha_i),  v = A alpha;  unit B = the accelerator (Backend), unit A = the CPU.
//   z_i: the CPU's gap memory (gap of coordinate i, possibly stale); working set P: the coordinates of largest z_i
//   whose column_bytes fit the accelerator's memory_budget().
//   round t:
//     1. load_working_set(P): only the columns not already resident travel ("swaps"); set_shared_vector(v).
//     2. concurrently: the accelerator runs `epochs_per_round` CD epochs on P (its own copy of v);
//        the CPU's T threads (SolverOptions::n_threads), each owning a random slice of the coordinates, from the
//        stale (alpha, v) refresh z_i for i outside P (role gaps, as published), or (role solve) also run CD on the
//        coordinates outside P, each thread against its own replica of v (SySCD's scheme inside the CPU part); the
//        accelerator uses sigma' = 2 (two parts), the CPU threads 2 T, and the updates are added (CoCoA+; Ma et al.,
//        ICML 2015).
//     3. merge: alpha_P from the accelerator; dv = A (alpha_new - alpha_old) in double (the host re-synchronizes v
//        from alpha, never trusting the device's float v); role solve: gamma by SySCD's line search on the
//        objective along the merged direction (adaptive aggregation, never worse than gamma = 1;
//        SolverOptions::adaptive_aggregation); v += gamma dv; z_P recomputed on the host in double.
//     4. every `exact_gap_every` rounds: v = A alpha from scratch, the exact certificate P - D in double; stop when
//        P - D <= tol |P| (the stale z is used for selection only, never for stopping).
//     5. P <- top coordinates by z (nth_element + greedy fill of the byte budget).
//   Baselines in the same harness: Selection::random (P uniformly at random), Selection::streaming (the chunks
//   0.., in turn: the paper's "sequential" baseline), and a budget that holds all data (P = everything, once).
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "hetglm/backend.hpp"
#include "hetglm/solvers/options.hpp"

namespace hetglm {

enum class CpuRole { gaps, solve };                 ///< DuHL as published | CPU also trains outside P
enum class Selection { gap, random, streaming };    ///< DuHL | random working sets | sequential streaming

/// "gaps" | "solve" -> CpuRole; "duhl"/"gap" | "random" | "streaming" -> Selection. Throw InvalidArgument
/// "--cpu-role: unknown value 'x' (expected gaps or solve)" / "--duhl-selection: unknown value 'x' (expected
/// duhl, random or streaming)".
CpuRole parse_cpu_role(const std::string& s);
Selection parse_selection(const std::string& s);
const char* cpu_role_name(CpuRole r);
const char* selection_name(Selection s);

/// One DuHL round (the report JSON's "rounds").
struct DuhlRound {
  int round = 0;
  double seconds = 0;            ///< wall time since the start, excluding the exact-certificate passes
  std::size_t working_set = 0;   ///< coordinates in P
  std::size_t swaps = 0;         ///< columns copied to the device this round
  std::size_t bytes_copied = 0;  ///< host-to-device bytes of load_working_set
  double ws_gap_share = 0;       ///< sum_{i in P} z_i / sum_i z_i when P was chosen (stale gaps)
  double accel_seconds = 0;      ///< run_epochs wall time
  std::size_t cpu_updates = 0;   ///< coordinate steps (role solve) or gap refreshes (role gaps) by the CPU threads
  double gamma = 1;              ///< the merge's step along the merged direction (adaptive aggregation, role solve)
  bool exact = false;            ///< the exact certificate below was computed this round
  bool host = false;             ///< a round of the host finish (float64 values, duhl.cpp): no accelerator, P empty
  double primal = 0, dual = 0, gap = 0, rel_gap = 0;
};

/// The most accelerator epochs per DuHL round (--duhl-epochs): a round's epochs are not interruptible (an interrupt
/// is seen between rounds), and 2^31 - 1 of them kept the process past Ctrl-C for good.
inline constexpr int kMaxDuhlEpochs = 1000;
/// Throws InvalidArgument unless 1 <= epochs <= kMaxDuhlEpochs.
void check_duhl_epochs(int epochs);

struct DuhlOptions {
  CpuRole cpu_role = CpuRole::gaps;
  Selection selection = Selection::gap;
  int epochs_per_round = 1;      ///< accelerator epochs over P per round
  int exact_gap_every = 0;       ///< rounds between exact certificates; 0 = ceil(data bytes / budget) (once a pass)
  int max_rounds = 0;            ///< 0 = max_epochs * ceil(data bytes / budget)
  std::function<void(const DuhlRound&)> on_round;  ///< progress (may be empty)
};

struct DuhlResult : SolveResult {
  std::vector<DuhlRound> rounds;
  std::size_t budget_bytes = 0;  ///< accelerator budget used
  std::size_t data_bytes = 0;    ///< sum of column_bytes over all coordinates
  std::string device;            ///< Backend::description()
};

/// Sum of column_bytes over the rows of A: the 100% of `--accel-memory 100%`.
std::size_t data_bytes(const CsrMatrix& A);

/// Train `form` from alpha = 0 with DuHL on `accel` (bound here), the CPU unit on options.n_threads threads (0: the
/// concurrency of the current oneTBB arena, as solve_parallel_cpu). Not deterministic: how much the CPU does in a
/// round depends on when the accelerator finishes. Throws InvalidArgument for negative n_threads,
/// "--accel-memory: a budget of B bytes is smaller than the largest column (C bytes); give at least C bytes",
/// TrainingError on a non-finite objective, DeviceError from the device.
template <class Form>
DuhlResult solve_duhl(const Form& form, Backend& accel, const SolverOptions& options, const DuhlOptions& duhl);

/// The device-agnostic objective description of a form; `storage` keeps the per-coordinate curvature alive.
template <class Form>
ObjectiveDesc describe_objective(const Form& form, std::vector<double>& storage);

}  // namespace hetglm
