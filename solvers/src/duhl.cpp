// SPDX-License-Identifier: Apache-2.0
// DuHL scheduler (algorithm and references in duhl.hpp).
#include "hetglm/solvers/duhl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <numeric>
#include <thread>

#include "hetglm/error.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "aggregate_step.hpp"
#include "executor.hpp"

namespace hetglm {

void check_duhl_epochs(int epochs) {
  if (epochs < 1 || epochs > kMaxDuhlEpochs)
    throw InvalidArgument(fmt::format(
        "--duhl-epochs: must be between 1 and {} (the accelerator's epochs on the working set per round), got {}",
        kMaxDuhlEpochs, epochs));
}

CpuRole parse_cpu_role(const std::string& s) {
  if (s == "gaps") return CpuRole::gaps;
  if (s == "solve") return CpuRole::solve;
  throw InvalidArgument(fmt::format("--cpu-role: unknown value '{}' (expected gaps or solve)", s));
}
Selection parse_selection(const std::string& s) {
  if (s == "duhl" || s == "gap") return Selection::gap;
  if (s == "random") return Selection::random;
  if (s == "streaming") return Selection::streaming;
  throw InvalidArgument(fmt::format("--duhl-selection: unknown value '{}' (expected duhl, random or streaming)", s));
}
const char* cpu_role_name(CpuRole r) { return r == CpuRole::gaps ? "gaps" : "solve"; }
const char* selection_name(Selection s) {
  return s == Selection::gap ? "duhl" : s == Selection::random ? "random" : "streaming";
}

std::size_t data_bytes(const CsrMatrix& A) {
  std::size_t s = 0;
  for (index_t i = 0; i < A.n_rows; ++i) s += column_bytes(A, i);
  return s;
}

template <class Form>
ObjectiveDesc describe_objective(const Form& form, std::vector<double>& storage) {
  ObjectiveDesc d;
  d.obj = form.obj;
  d.n_coords = form.n_coords();
  d.dim = form.dim();
  storage.resize(static_cast<std::size_t>(form.n_coords()));
  for (index_t i = 0; i < form.n_coords(); ++i) storage[i] = form.curvature(i);
  d.coord_curvature = storage.data();
  if constexpr (Form::formulation == Formulation::dual) {
    d.coord_labels = form.y;
    d.coord_weights = form.c;
  } else {
    d.row_labels = form.y;
    d.row_weights = form.c;
  }
  return d;
}

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
constexpr std::int64_t kGapGrain = 2048;  // coordinates per task of the first gap pass
constexpr double kStarvedShare = 0.25;    // of the budget: select()'s starved share (measured, docs/duhl.md step 5)

/// DuHL with T CPU threads (solve_duhl runs it in the solver arena).
template <class Form>
DuhlResult run_duhl(const Form& form, Backend& accel, const SolverOptions& so, const DuhlOptions& o, const int T) {
  const CsrMatrix& A = *form.A;
  const index_t m = form.n_coords();
  const auto mz = static_cast<std::size_t>(m);
  DuhlResult res;
  // One history row per round with an exact certificate; the exact-certificate passes are measurement, not training:
  // the driver leaves them out of the per-round times.
  EpochDriver driver(so, res, Form::formulation);
  res.device = accel.description();
  if (form.lo) driver.float64_values();

  std::vector<std::size_t> bytes(mz);
  std::size_t total = 0, maxcol = 0, mincol = SIZE_MAX;
  for (index_t i = 0; i < m; ++i) {
    bytes[i] = column_bytes(A, i);
    total += bytes[i];
    maxcol = std::max(maxcol, bytes[i]);
    mincol = std::min(mincol, bytes[i]);
  }
  const std::size_t budget = std::min(accel.memory_budget(), total);
  const std::size_t meancol = mz > 0 ? total / mz : 1;
  res.budget_bytes = budget;
  res.data_bytes = total;
  if (accel.memory_budget() < maxcol)
    throw InvalidArgument(fmt::format(
        "--accel-memory: a budget of {} bytes is smaller than the largest column ({} bytes); give at least {} bytes",
        accel.memory_budget(), maxcol, maxcol));
  check_duhl_epochs(o.epochs_per_round);

  std::vector<double> curv;
  accel.bind(describe_objective(form, curv));

  const bool all_fit = budget >= total;
  // No stored entry at all (no coordinates, or only empty ones: a file without features in the primal): one pass
  // (budget is 0 there, and the division crashed the process with SIGFPE).
  const int passes = total > 0 ? static_cast<int>((total + budget - 1) / budget) : 1;
  const int exact_every = o.exact_gap_every > 0 ? o.exact_gap_every : std::max(1, passes / o.epochs_per_round);
  const long max_rounds = o.max_rounds > 0 ? o.max_rounds : long(so.max_epochs) * std::max(1, passes / o.epochs_per_round);

  driver.initial_alpha(form, res.alpha);
  std::vector<double>& alpha = res.alpha;
  std::vector<double> v = shared_vector(form, alpha);
  std::vector<double> z(mz);
  parallel_chunks((std::int64_t(m) + kGapGrain - 1) / kGapGrain, [&](std::int64_t c) {
    const index_t hi = static_cast<index_t>(std::min<std::int64_t>(m, (c + 1) * kGapGrain));
    for (index_t i = static_cast<index_t>(c * kGapGrain); i < hi; ++i) z[i] = form.coordinate_gap(i, alpha[i], v.data());
  });

  std::vector<char> in_ws(mz, 0);
  std::vector<index_t> ws, cand(mz);
  std::iota(cand.begin(), cand.end(), index_t{0});
  std::vector<index_t> cpu_order(mz);
  std::iota(cpu_order.begin(), cpu_order.end(), index_t{0});
  SplitMix64 rng(so.seed ^ 0x5DEECE66Dull);
  shuffle(std::span<index_t>(cpu_order), rng);
  std::size_t stream_pos = 0;
  // The CPU unit's T threads: thread t owns the slice [lo, hi) of the random order cpu_order (its coordinates: only
  // it writes their alpha_i and z_i), walks it with a persistent cursor, and in role solve steps against its own
  // replica of v (SySCD's scheme inside the CPU part; sigma' below).
  struct CpuThread {
    std::size_t lo = 0, hi = 0, pos = 0;
    std::size_t updates = 0;
    std::vector<double> v;
    std::vector<std::pair<index_t, double>> deltas;
  };
  std::vector<CpuThread> cpu(static_cast<std::size_t>(T));
  for (int t = 0; t < T; ++t) {
    cpu[t].lo = mz * static_cast<std::size_t>(t) / static_cast<std::size_t>(T);
    cpu[t].hi = mz * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(T);
  }

  std::size_t starved_pos = 0;  // select(): the starved share's cursor in cpu_order
  auto select = [&]() {
    for (index_t i : ws) in_ws[i] = 0;
    ws.clear();
    std::size_t used = 0, cap = budget;  // cap: the bytes the current step of the selection may fill up to
    auto try_add = [&](index_t i) {
      if (in_ws[i]) return true;  // taken by the starved share (below) already
      if (used + bytes[i] > cap) return false;
      used += bytes[i];
      ws.push_back(i);
      in_ws[i] = 1;
      return true;
    };
    if (all_fit) {
      for (index_t i = 0; i < m; ++i) try_add(i);
    } else if (o.selection == Selection::streaming) {
      // The next chunk of consecutive coordinates that fits (wrapping around): the paper's sequential baseline.
      for (std::size_t k = 0; k < mz; ++k) {
        const auto i = static_cast<index_t>(stream_pos % mz);
        if (!try_add(i)) break;
        ++stream_pos;
      }
      stream_pos %= mz;
    } else {
      if (o.selection == Selection::random) {
        shuffle(std::span<index_t>(cand), rng);
        for (std::size_t k = 0; k < mz && budget - used >= mincol; ++k) try_add(cand[k]);
      } else {
        // First the starved share: up to kStarvedShare of the budget for the coordinates with a positive gap next
        // in a fixed random order (cpu_order, a cursor kept across rounds), so that every such coordinate is in P
        // at least once every 1 / (kStarvedShare x budget share) rounds or so. Greedy selection alone can
        // alternate between two sets that re-excite each other's gaps while the others starve: with gaps fresh
        // every round it stalled (ridge on a9a at 25%: relative gap 0.93 after 400 rounds); the share took the
        // rounds to 1e-4 of ridge from 1168 to 364 on mushrooms and 336 to 52 on 200,000 x 100,000, logistic 72 to
        // 40 there (docs/duhl.md step 5). Zero gaps (hinge samples with margin >= 1 at alpha = 0, optimal for the
        // current v) are skipped: a step would not move them. The walk looks at most 4 times as many coordinates
        // as the share holds (the cursor moves on, so over the rounds it passes every coordinate): a walk over every
        // coordinate where most gaps are zero (the hinge) cost a9a's svm 4-6% of its time.
        // The dual only: in the primal (features of very different sizes) it cost 7% of the time on w7a and the
        // generated 100,000 x 50,000 set (logistic, ridge) for about the same rounds.
        const std::size_t per_col = std::max<std::size_t>(meancol, 1);
        cap = Form::formulation == Formulation::dual ? static_cast<std::size_t>(double(budget) * kStarvedShare) : 0;
        const std::size_t walk = std::min(mz, 4 * (cap / per_col) + 64);
        for (std::size_t k = 0; k < walk && cap - used >= mincol; ++k) {
          const index_t i = cpu_order[starved_pos];
          starved_pos = starved_pos + 1 == mz ? 0 : starved_pos + 1;
          if (z[i] > 0) try_add(i);
        }
        cap = budget;
        // Then the greedy fill of the rest by stale gap: the columns in decreasing gap order, each taken where it
        // still fits. Its largest prefix that fits as a whole is taken without sorting it: nth_element finds the k
        // largest gaps (k from the mean column size, scaled down by the room left / their bytes until they fit), and
        // every one of them would have fit in sorted order as well (the bytes before any of them are at most their
        // sum), so the set is the greedy one; only its order is nth_element's. The rest in blocks: nth_element +
        // sort of the next block only (O(m) expected per round). Ties broken by index so a run is reproducible.
        // (Sorting the first 2 budget / mean column size gaps every round was a quarter of a DuHL round on the
        // host, bench/results/duhl_threads.md.)
        auto by_gap = [&](index_t a, index_t b) { return z[a] > z[b] || (z[a] == z[b] && a < b); };
        std::size_t lo = 0;
        for (std::size_t k = std::min(mz, budget / per_col), top = mz, tries = 0; k >= 64; ++tries) {
          // the k largest of the `top` largest (cand[0, top) after the last pass)
          const auto kth = cand.begin() + static_cast<std::ptrdiff_t>(k);
          if (k < top) std::nth_element(cand.begin(), kth, cand.begin() + static_cast<std::ptrdiff_t>(top), by_gap);
          std::size_t sum = used;  // the starved share's, and the k's not taken by it
          for (std::size_t q = 0; q < k; ++q) sum += in_ws[cand[q]] ? 0 : bytes[cand[q]];
          if (sum <= budget) {
            for (std::size_t q = 0; q < k; ++q) try_add(cand[q]);
            lo = k;
            break;
          }
          // Scaled by the room left over the new columns' bytes (sum > budget >= used here); from the third try on at
          // least halved (a few columns larger than the budget at the top would otherwise take about 100 ln(k / 64)
          // tries of 1% each).
          top = k;
          const auto scaled = static_cast<std::size_t>(double(k) * 0.99 * double(budget - used) / double(sum - used));
          k = std::min(tries < 2 ? k - 1 : k / 2, scaled);
        }
        std::size_t hi = std::min(mz, lo + std::max<std::size_t>(64, 2 * (budget - used) / per_col + 1));
        while (lo < mz && budget - used >= mincol) {
          auto first = cand.begin() + static_cast<std::ptrdiff_t>(lo), last = cand.begin() + static_cast<std::ptrdiff_t>(hi);
          if (hi < mz) std::nth_element(first, last, cand.end(), by_gap);
          std::sort(first, last, by_gap);
          for (std::size_t k = lo; k < hi && budget - used >= mincol; ++k) try_add(cand[k]);
          lo = hi;
          hi = std::min(mz, 2 * hi);
        }
      }
    }
  };

  std::vector<double> alpha_ws, alpha_new, alpha_old, dv(v.size());
  std::vector<index_t> changed;
  AggregationScratch agg;
  const bool adaptive = so.adaptive_aggregation;
  // The host finish (float64 values, form.lo): the accelerator steps on float32 columns against its float32 copy of
  // v, so its steps aim at the float32-rounded problem; the host's certificate is the float64 problem's. For the
  // smooth losses that costs nothing measurable (the rounding moves the fixed point by about 1e-7 relative, the
  // objective at second order); for the hinge the certificate stalls at about 1e-10 relative (measured on Gaussian
  // data: 2e-10 to 9e-10). When the stall rule stops such a run, the rounds go on without the accelerator: the CPU
  // unit's T threads step on every coordinate (role solve, sigma' = T: SySCD) on the float64 values, with an exact
  // certificate every round, until the certificate meets tol or stalls again (DuhlRound::host).
  bool host_only = false;
  int round = 0;
  bool stop = false;
  while (!stop && round < max_rounds) {
    ++round;
    DuhlRound rec;
    rec.round = round;
    rec.host = host_only;
    if (!host_only && (round == 1 || !all_fit)) select();
    double zsum = 0, zws = 0;
    for (index_t i = 0; i < m; ++i) zsum += std::max(0.0, z[i]);  // gaps are >= 0 up to rounding
    for (index_t i : ws) zws += std::max(0.0, z[i]);
    rec.ws_gap_share = zsum > 0 ? zws / zsum : 0;
    rec.working_set = ws.size();
    if (!host_only) {
      alpha_ws.resize(ws.size());
      for (std::size_t p = 0; p < ws.size(); ++p) alpha_ws[p] = alpha[ws[p]];
      const LoadReport lr = accel.load_working_set(ws, A, alpha_ws);
      rec.swaps = lr.columns_copied;
      rec.bytes_copied = lr.bytes_copied;
      accel.set_shared_vector(v);
    }

    const bool solve = host_only || (o.cpu_role == CpuRole::solve && ws.size() < mz);
    // CoCoA+ adding with K = 2 parts, the accelerator and the CPU unit: sigma' = 2 for the accelerator. The CPU part's
    // subproblem is solved by T replicas, SySCD inside it: its coupling term sigma' ||A dalpha_cpu||^2 is at most
    // sigma' T sum_t ||A dalpha_t||^2, so each thread steps with sigma' T (the accelerator's steps do not depend on T).
    // (In the host finish the CPU unit is the only part: sigma' = 1 before its T replicas.)
    const double sigma = solve && !host_only ? 2.0 : 1.0;
    const double sigma_cpu = sigma * T;
    std::atomic<bool> done{host_only};
    std::exception_ptr err;
    EpochReport er;
    std::thread accel_thread;
    if (!host_only)
      accel_thread = std::thread([&] {
        try {
          er = accel.run_epochs(o.epochs_per_round, so.seed + 7919ull * static_cast<std::uint64_t>(round), sigma);
        } catch (...) {
          err = std::current_exception();
        }
        done.store(true, std::memory_order_release);
      });
    // Unit A, concurrently: at most `epochs_per_round` passes over the coordinates outside P, stopping when the
    // accelerator is done; a persistent cursor so every coordinate gets its turn over the rounds.
    // It also visits at least as many outside coordinates as the accelerator steps (|P| per epoch): with a device
    // much faster than the host, the time-delay strategy alone would leave the gap memory outside P frozen and the
    // selection could cycle on a stale set (observed on PoCL); this floor keeps the refresh moving. Each thread
    // takes the share of both bounds of its slice.
    const std::size_t min_outside = std::min(mz - ws.size(), ws.size()) * static_cast<std::size_t>(o.epochs_per_round);
    if (solve && adaptive) alpha_old = alpha;
    run_tasks(T, true, [&](int t) {
      CpuThread& c = cpu[t];
      c.updates = 0;
      c.deltas.clear();
      const std::size_t len = c.hi - c.lo;
      if (len == 0) return;
      const std::size_t max_visits = len * static_cast<std::size_t>(o.epochs_per_round);
      const std::size_t min_out = (min_outside * len + mz - 1) / mz;
      if (solve) c.v = v;
      double* vt = solve ? c.v.data() : v.data();
      std::size_t visited = 0, outside = 0;
      while (visited < max_visits && (host_only || outside < min_out || !done.load(std::memory_order_acquire))) {
        for (int burst = 0; burst < 16 && visited < max_visits; ++burst, ++visited) {
          const index_t i = cpu_order[c.lo + c.pos];
          if (len > kPrefetchRows) {  // forms.hpp prefetch_ahead, on the unit's cyclic range
            std::size_t far = c.pos + 2 * kPrefetchRows, near = c.pos + kPrefetchRows;  // wrapped without a division
            while (far >= len) far -= len;  // at most twice: len > kPrefetchRows
            if (near >= len) near -= len;
            prefetch_scalars(form, cpu_order[c.lo + far], alpha.data());
            prefetch_row(*form.A, cpu_order[c.lo + near], form.lo);
          }
          c.pos = c.pos + 1 == len ? 0 : c.pos + 1;
          if (in_ws[i]) continue;
          ++outside;
          z[i] = form.coordinate_gap(i, alpha[i], vt);
          if (!solve) continue;
          const double delta = update_coordinate(form, i, alpha.data(), vt, sigma_cpu);
          if (delta != 0) c.deltas.emplace_back(i, delta);
        }
      }
      c.updates = outside;
    });
    if (accel_thread.joinable()) accel_thread.join();
    if (err) std::rethrow_exception(err);
    if (!er.numerics_ok)
      throw TrainingError(fmt::format("numerical failure at DuHL round {}: the device saw a NaN or infinity", round));
    rec.accel_seconds = er.seconds;
    for (const CpuThread& c : cpu) rec.cpu_updates += c.updates;

    // Merge: alpha from both units; dv = A dalpha in double, from alpha (never the device's float v), on the float64
    // values when the form reads them (form.lo: the device stepped on float32 columns, the host's v, gaps and
    // certificate stay the float64 problem's, docs/formulation.md "float64 data"); in role solve,
    // adaptive aggregation (aggregate_step.hpp) then takes the step gamma dv along the merged direction, gamma >= 1
    // when it pays; v += gamma dv.
    alpha_new.resize(ws.size());
    if (!host_only) accel.get_alpha(alpha_new);
    std::fill(dv.begin(), dv.end(), 0.0);
    changed.clear();
    for (std::size_t p = 0; p < ws.size(); ++p) {
      const double delta = alpha_new[p] - alpha[ws[p]];
      if (delta == 0) continue;
      alpha[ws[p]] = alpha_new[p];
      row_axpy(A, ws[p], delta, dv.data(), form.lo);
      changed.push_back(ws[p]);
    }
    for (const CpuThread& c : cpu)
      for (const auto& [i, delta] : c.deltas) {
        row_axpy(A, i, delta, dv.data(), form.lo);
        changed.push_back(i);
      }
    rec.gamma = solve && adaptive ? aggregate_step(form, changed, alpha_old.data(), alpha.data(), v, dv,
                                                   MergePlan::cocoa(sigma_cpu), agg)
                                  : 1.0;
    for (std::size_t j = 0; j < dv.size(); ++j) v[j] += rec.gamma * dv[j];
    // Fresh gaps of P from the merged v, in double on the host (O(nnz_P)): the device's float32 gaps
    // (Backend::coordinate_gaps) are too noisy for selection when the Lipschitzing bound B multiplies the rounding
    // of s_j (Lasso on PoCL stalled on that noise).
    for (index_t i : ws) z[i] = form.coordinate_gap(i, alpha[i], v.data());

    const bool interrupt = driver.poll_interrupt();  // once per round; record() below uses this answer
    if (host_only || round % exact_every == 0 || round == max_rounds) {
      const auto tc = Clock::now();
      v = shared_vector(form, alpha);
      const Certificate c = certificate(form, alpha, v);
      driver.exclude(since(tc));
      // The driver records the round (finite check, history, progress) and applies the stop rule; the round budget
      // is max_rounds here, so only convergence and interrupts stop it.
      const EpochDriver::Stop s = driver.record(round, c, alpha, v);
      rec.exact = true;
      rec.primal = c.primal;
      rec.dual = c.dual;
      rec.gap = c.gap;
      rec.rel_gap = relative_gap(c);
      stop = s == EpochDriver::Stop::converged || s == EpochDriver::Stop::interrupted || s == EpochDriver::Stop::stalled;
      if (s == EpochDriver::Stop::stalled && form.lo && !host_only) {  // the host finish (above)
        host_only = true;
        stop = false;
        driver.restart_stall_rules(round);
        for (index_t i : ws) in_ws[i] = 0;
        ws.clear();
      }
    } else if (interrupt) {
      driver.mark_interrupted();
      stop = true;
    }
    rec.seconds = driver.seconds();
    res.rounds.push_back(rec);
    if (o.on_round) o.on_round(rec);
  }
  v = shared_vector(form, alpha);
  driver.finish(form, certificate(form, alpha, v), v, round);
  return res;
}

}  // namespace

template <class Form>
DuhlResult solve_duhl(const Form& form, Backend& accel, const SolverOptions& so, const DuhlOptions& o) {
  if (so.n_threads < 0) throw InvalidArgument(fmt::format("--threads: must be >= 0 (0 = all cores), got {}", so.n_threads));
  if (so.deterministic.value_or(false))
    throw InvalidArgument("--deterministic: DuHL (--device other than cpu, or --accel-memory) cannot be deterministic: "
                          "how much the CPU unit does in a round depends on when the accelerator finishes "
                          "(docs/duhl.md); drop --deterministic, or train on the CPU alone");
  return in_solver_arena(so.n_threads, [&](int T) { return run_duhl(form, accel, so, o, T); });
}

#define HETGLM_DUHL_INST(...)                                                                                      \
  template DuhlResult solve_duhl(const __VA_ARGS__&, Backend&, const SolverOptions&, const DuhlOptions&);        \
  template ObjectiveDesc describe_objective(const __VA_ARGS__&, std::vector<double>&);
HETGLM_FOR_EACH_FORM(HETGLM_DUHL_INST)
#undef HETGLM_DUHL_INST

}  // namespace hetglm
