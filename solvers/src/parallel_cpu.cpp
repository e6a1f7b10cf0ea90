// SPDX-License-Identifier: Apache-2.0
// Parallel CPU solvers: SySCD and the PASSCoDe baselines (algorithm in parallel_cpu.hpp, docs/parallel-cpu.md).
#include "hetglm/solvers/parallel_cpu.hpp"

#include <fmt/format.h>
#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include "hetglm/error.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/solvers/numa.hpp"
#include "hetglm/solvers/epoch_driver.hpp"
#include "hetglm/solvers/sequential.hpp"
#include "aggregate_step.hpp"
#include "executor.hpp"
#include "shrinking.hpp"

namespace hetglm {

namespace {

bool finite(const Certificate& c) { return std::isfinite(c.primal) && std::isfinite(c.dual); }

constexpr index_t kReduceGrain = 2048;   // coordinates per leaf of the certificate reduction
constexpr std::size_t kVecGrain = 4096;  // entries of v per task of the replica merge
// Epochs after which a certificate re-synchronizes v = A alpha even when it does not claim convergence. Between
// re-synchronizations v drifts from A alpha by the rounding of its updates in double (about nnz / d additions to
// an entry per epoch, each within half an ulp): after 50 epochs still many orders of magnitude below the smallest
// tolerance (kFloat64Tol's certificates), and the drifted certificate only guides shrinking and the schedule;
// every convergence decision is made on an exact one. With 10 (when every epoch was certified, one certificate
// in ten) the certificate schedule's sparser certificates re-synchronized almost every time: the hinge on sparse
// 200,000 x 100,000 at 2 threads re-synchronized at 5 of its 7 certificates, 0.043-0.054 s of a 0.26 s solve.
constexpr int kResyncEvery = 50;

/// Sums body(lo, hi) over fixed chunks of kReduceGrain coordinates of [0, n), computed in parallel and added in
/// chunk order by the caller: the result never depends on the thread count or the schedule.
template <class Body>
CertificateTerms reduce(index_t n, const Body& body) {
  if (n <= 0) return {};
  const std::int64_t chunks = (std::int64_t(n) + kReduceGrain - 1) / kReduceGrain;
  std::vector<CertificateTerms> part(static_cast<std::size_t>(chunks));
  parallel_chunks(chunks, [&](std::int64_t c) {
    const index_t lo = static_cast<index_t>(c * kReduceGrain);
    part[c] = body(lo, static_cast<index_t>(std::min<std::int64_t>(lo + std::int64_t(kReduceGrain), n)));
  });
  CertificateTerms total;
  for (const CertificateTerms& p : part) total = total + p;
  return total;
}

/// Runs body(lo, hi) over ranges of at most kVecGrain entries of [0, n), in parallel.
template <class Body>
void for_ranges(std::size_t n, const Body& body) {
  const std::int64_t chunks = static_cast<std::int64_t>((n + kVecGrain - 1) / kVecGrain);
  parallel_chunks(chunks, [&](std::int64_t c) {
    const std::size_t lo = static_cast<std::size_t>(c) * kVecGrain;
    body(lo, std::min(n, lo + kVecGrain));
  });
}

/// Row boundaries cutting [0, A.n_rows) into `parts` chunks of about equal nonzeros (and rows when nnz = 0).
std::vector<index_t> balanced_rows(const CsrMatrix& A, int parts) {
  std::vector<index_t> b(static_cast<std::size_t>(parts) + 1, 0);
  const offset_t nnz = A.nnz();
  for (int p = 1; p < parts; ++p) {
    if (nnz == 0) {
      b[p] = static_cast<index_t>(static_cast<std::int64_t>(A.n_rows) * p / parts);
      continue;
    }
    const offset_t target = nnz * p / parts;
    const auto it = std::lower_bound(A.offsets.begin(), A.offsets.end(), target);
    b[p] = std::max(b[p - 1], static_cast<index_t>(std::min<std::ptrdiff_t>(it - A.offsets.begin(), A.n_rows)));
  }
  b[parts] = A.n_rows;
  return b;
}

/// Software prefetch of the nonzeros (up to 1 KiB of values and of indices) of rows [lo, hi) (their alpha entries
/// come with the scalars: ReplicaEpochs::prefetch_scalars_of). Always inlined, as prefetch_row (forms.hpp): GCC
/// removed the calls of this function when it was not.
[[gnu::always_inline]] inline void prefetch_bucket(const CsrMatrix& A, index_t lo, index_t hi) {
  const offset_t k0 = A.offsets[lo];
  const offset_t k1 = A.offsets[hi];
  const std::size_t bytes = std::min<std::size_t>(static_cast<std::size_t>(k1 - k0) * sizeof(float), 1024);
  const char* pv = reinterpret_cast<const char*>(A.values.data() + k0);
  const char* pi = reinterpret_cast<const char*>(A.indices.data() + k0);
  for (std::size_t off = 0; off < bytes; off += 64) {
    __builtin_prefetch(pv + off, 0, 1);
    __builtin_prefetch(pi + off, 0, 1);
  }
}
/// The same for the rows listed in [first, last) (anywhere in A): prefetch_row of each.
[[gnu::always_inline]] inline void prefetch_rows(const CsrMatrix& A, const index_t* first, const index_t* last) {
  for (const index_t* it = first; it != last; ++it) prefetch_row(A, *it);
}

/// The parallel solvers' seeded random order of m coordinates (solve_parallel_cpu and a CoCoA+ rank's
/// SyscdLocalSolver draw the same one for the same seed).
std::vector<index_t> random_order(index_t m, std::uint64_t seed) {
  std::vector<index_t> p(static_cast<std::size_t>(m));
  std::iota(p.begin(), p.end(), index_t{0});
  SplitMix64 prng(seed ^ 0x2545F4914F6CDD1Dull);
  shuffle(std::span<index_t>(p), prng);
  return p;
}

/// Mean bytes of a row that a coordinate step reads, from which SySCD lists its coordinates in their random order
/// instead of copying the rows into it (listed_order). Measured at 2 threads, dual logistic / ridge to 1e-4, listed
/// against copied, medians of 5 (docs/parallel-cpu.md, "One random permutation"): dense rows of 32 and 100 entries
/// (128 and 400 bytes) 0.82-0.84x and 0.87-1.01x; of 250 and 500 entries (1,000 and 2,000 bytes) 1.8x and
/// 1.03-1.13x; sparse rows of 50 entries on average (400 bytes) 0.81-1.03x, of 600 (4,800 bytes) 1.08x.
constexpr double kListedRowBytes = 768;

/// Whether the parallel solver lists the coordinates in their random order (ReplicaEpochs' `order`) rather than
/// copying the rows into it (PermutedForm): never for SySCD on real NUMA nodes (a node's block must be rows of its
/// local memory); otherwise where the rows are long. A copied order keeps a bucket's rows and per-coordinate data
/// next to each other, which pays for short rows whose steps are bound by memory latency; for long rows the copy
/// (a gather of every row and a second copy of the matrix in memory) costs more than it saves.
template <class Form>
bool listed_order(const Form& f, const SolverOptions& o) {
  if (o.solver == SolverKind::syscd && numa::node_count() > 1) return false;
  if (o.listed_order) return *o.listed_order;
  const CsrMatrix& A = *f.A;
  if (A.n_rows == 0) return true;
  const bool full = A.nnz() == offset_t(A.n_rows) * offset_t(A.n_cols) && detail::full_row(A, 0, A.n_cols);
  const double per_entry = (full ? 4.0 : 8.0) + (f.lo ? 4.0 : 0.0);  // values (+ indices) (+ float64 remainders)
  return per_entry * double(A.nnz()) / double(A.n_rows) >= kListedRowBytes;
}

/// SySCD's (and PASSCoDe's) epochs over `form`, whose coordinates are in a seeded random order: either physically
/// (`order` empty: solve_parallel_cpu and SyscdLocalSolver copy the rows into it for short rows and where NUMA
/// nodes pin their memory, listed_order) or listed (`order[q]`: the coordinate at position q; long rows on one
/// NUMA node, no copy). Node blocks and buckets are contiguous positions of that order: random sets of the original
/// coordinates. One object serves the single-process solver (run_parallel: certificates, shrinking and adaptive
/// aggregation around it) and the local solver of a CoCoA+ rank (SyscdLocalSolver, cocoa.hpp).
///   epoch(alpha, v): one pass of coordinate steps; SySCD: thread t on its replica v_t (a copy of v) with the step's
///     sigma' = step_sigma, v_t += step_sigma (a_new - alpha_i) a_i; PASSCoDe: on v itself.
///   merge(v): SySCD, dv = sum_t (v_t - v) / merge_div (two levels when K > 1); the caller adds it to v.
template <class Form>
struct ReplicaEpochs {
  const Form& form;
  const CsrMatrix& A;
  const index_t m;
  const std::size_t d;
  const int T;
  const bool det, syscd, wild;
  const index_t* idx;
  const float* val;
  index_t B = 1;
  int phys = 1, K = 1;
  bool pin = false;
  std::vector<index_t> c_lo, t_lo;
  std::vector<int> node_of;
  double sigma = 1;      ///< sigma' of the coordinate step
  double merge_div = 1;  ///< the replicas' changes are divided by this in merge()
  std::vector<numa::NodeBuffer> rep, node_rep;
  ActiveSet active;
  std::vector<index_t> pos_of;  // listed order: the position of coordinate i (empty: physical order, i itself)
  bool redeal = false;
  index_t node_block = 1, n_blocks = 0;
  std::vector<int> block_node;
  std::vector<index_t> block_order;
  SplitMix64 deal_rng;
  std::vector<std::vector<index_t>> node_act, perm;
  std::vector<std::int64_t> list_lo, list_hi;
  std::vector<std::atomic<std::int64_t>> cursor;
  SplitMix64 rng;
  std::uint64_t epoch_seed = 0;
  int epochs_run = 0;
  std::vector<double> dv;
  double* alpha = nullptr;  // the arguments of the current epoch()
  double* v = nullptr;
  // The box duals' margin rule (shrinking.hpp MarginRule; SySCD in run_parallel, which sets box_shrink): a sample
  // that leaves the active set in an epoch is marked in left_out by its thread and dropped after the epoch
  // (box_epoch_done).
  static constexpr int kStatStride = 8;  // doubles per thread in pg_stat (its own cache line)
  bool box_shrink = false;
  MarginRule rule;
  std::vector<unsigned char> left_out;
  std::vector<double> pg_stat;  // per thread: largest and smallest projected G of the epoch, 1 if a sample left

  /// alpha: where the coordinate variables live (NUMA placement of their node slices). step_sigma, merge_div: SySCD's
  /// sigma' and the divisor of its merge (both T in one process; CoCoA+ rank: outer sigma' x T and T).
  /// order: see above; not with real NUMA nodes (their blocks must be contiguous rows of memory).
  ReplicaEpochs(const Form& f, const SolverOptions& o, int T_, double* alpha_home, double step_sigma, double merge_by,
                std::vector<index_t> order = {})
      : form(f), A(*f.A), m(f.n_coords()), d(static_cast<std::size_t>(f.dim())), T(T_),
        det(o.deterministic.value_or(true)), syscd(o.solver == SolverKind::syscd),
        wild(o.solver == SolverKind::passcode_wild), idx(A.indices.data()), val(A.values.data()),
        deal_rng(o.seed ^ 0xD1B54A32D192ED03ull), rng(o.seed) {
    // Buckets of B coordinates of a node's active list. Automatic: 2. Larger buckets keep more rows together but
    // cost epochs, as their membership is fixed by the physical order (measured without shrinking, epochs to 1e-4
    // relative to the sequential solver, 1 thread: B = 8 needs 1.3x on a9a hinge, 1.7x logistic, 2.3x squared
    // hinge; B = 2 needs 1.0-1.2x everywhere, docs/parallel-cpu.md).
    B = o.bucket_size > 0 ? static_cast<index_t>(o.bucket_size)
                          : std::clamp<index_t>(m / (4 * static_cast<index_t>(T)), 1, 2);
    // NUMA: K (real or virtual) nodes; node k owns the coordinates [c_lo[k], c_lo[k+1]) (a random block: the order
    // is random) and the threads [t_lo[k], t_lo[k+1]).
    phys = numa::node_count();
    K = syscd ? (o.numa_nodes > 0 ? o.numa_nodes : phys) : 1;
    K = std::max(1, static_cast<int>(std::min<std::int64_t>({K, T, std::max<index_t>(m, 1)})));
    pin = syscd && phys > 1;  // real nodes: node k runs on physical node k % phys
    if (pin && !order.empty())
      throw std::logic_error("ReplicaEpochs: a listed order with real NUMA nodes (their blocks are rows of memory)");
    if (!order.empty()) {
      pos_of.resize(order.size());
      for (std::size_t q = 0; q < order.size(); ++q)
        pos_of[static_cast<std::size_t>(order[q])] = static_cast<index_t>(q);
      active.set_order(std::move(order));
    }
    c_lo = balanced_rows(A, K);
    t_lo.resize(static_cast<std::size_t>(K) + 1);
    for (int k = 0; k <= K; ++k) t_lo[k] = static_cast<index_t>(std::int64_t(T) * k / K);
    node_of.resize(static_cast<std::size_t>(T));
    for (int k = 0; k < K; ++k)
      for (int t = t_lo[k]; t < t_lo[k + 1]; ++t) node_of[t] = k;
    sigma = syscd ? step_sigma : 1.0;
    merge_div = merge_by;
    if (pin) {  // node-local data: move each node's rows and alpha slice to its memory (best effort)
      for (int k = 0; k < K; ++k) {
        const index_t r0 = c_lo[k], r1 = c_lo[k + 1];
        const offset_t k0 = A.offsets[r0], k1 = A.offsets[r1];
        numa::migrate_to_node(val + k0, static_cast<std::size_t>(k1 - k0) * sizeof(float), k % phys);
        numa::migrate_to_node(idx + k0, static_cast<std::size_t>(k1 - k0) * sizeof(index_t), k % phys);
        numa::migrate_to_node(alpha_home + r0, static_cast<std::size_t>(r1 - r0) * sizeof(double), k % phys);
      }
    }
    // One buffer of dim() doubles per logical thread: its replica of v (syscd) or its gather scratch (PASSCoDe);
    // node-level replicas for the two-level reduction. Placed on the node (first touch by the node's threads
    // when the nodes are virtual).
    rep.resize(static_cast<std::size_t>(T));
    for (int t = 0; t < T; ++t) rep[t] = numa::NodeBuffer(d, pin ? node_of[t] % phys : -1);
    node_rep.resize(K > 1 ? static_cast<std::size_t>(K) : 0);
    for (std::size_t k = 0; k < node_rep.size(); ++k) node_rep[k] = numa::NodeBuffer(d, pin ? int(k) % phys : -1);
    // The active coordinates (shrinking.hpp), dealt to the nodes; per node a permutation of its buckets, redrawn
    // every epoch (dynamic re-partitioning inside the node); thread t's list is a contiguous cut [list_lo[t],
    // list_hi[t]) of its node's permutation. Real NUMA nodes own the fixed blocks [c_lo[k], c_lo[k+1]) (their memory
    // is local); virtual nodes (one physical node) are dealt a fresh random set of blocks of the physical order
    // every epoch, which costs no locality and keeps the static split from slowing convergence (measured on
    // label-sorted a9a, logistic, 2 threads and 2 virtual nodes: 398 epochs with fixed blocks,
    // docs/parallel-cpu.md).
    active.reset(0, m);
    redeal = !pin && K > 1;
    node_block = std::max<index_t>(1, static_cast<index_t>((std::int64_t(m) + 64 * K - 1) / (64 * K)));
    n_blocks = m > 0 ? (m + node_block - 1) / node_block : 0;
    block_node.assign(static_cast<std::size_t>(n_blocks), 0);
    block_order.resize(static_cast<std::size_t>(n_blocks));
    std::iota(block_order.begin(), block_order.end(), index_t{0});
    node_act.resize(static_cast<std::size_t>(K));
    perm.resize(static_cast<std::size_t>(K));
    list_lo.resize(static_cast<std::size_t>(T));
    list_hi.resize(static_cast<std::size_t>(T));
    deal();
    cursor = std::vector<std::atomic<std::int64_t>>(static_cast<std::size_t>(T));  // work stealing
    dv.resize(syscd ? d : 0);
  }

  void split_active() {
    if (redeal) {
      shuffle(std::span<index_t>(block_order), deal_rng);
      for (index_t q = 0; q < n_blocks; ++q) block_node[block_order[q]] = static_cast<int>(std::int64_t(q) * K / n_blocks);
    }
    for (auto& na : node_act) na.clear();
    int k = 0;
    for (index_t i : active.coords()) {
      if (redeal) {
        k = block_node[(pos_of.empty() ? i : pos_of[static_cast<std::size_t>(i)]) / node_block];
      } else {
        while (i >= c_lo[k + 1]) ++k;
      }
      node_act[k].push_back(i);
    }
  }
  /// The active set dealt to the nodes, each node's buckets cut into its threads' lists.
  void deal() {
    split_active();
    for (int k = 0; k < K; ++k) {
      const std::int64_t nbk = (static_cast<std::int64_t>(node_act[k].size()) + B - 1) / B;
      perm[k].resize(static_cast<std::size_t>(nbk));
      std::iota(perm[k].begin(), perm[k].end(), index_t{0});
      const std::int64_t Tk = t_lo[k + 1] - t_lo[k];
      for (std::int64_t j = 0; j < Tk; ++j) {
        list_lo[t_lo[k] + j] = nbk * j / Tk;
        list_hi[t_lo[k] + j] = nbk * (j + 1) / Tk;
      }
    }
  }

  // One coordinate step of SySCD on replica vt (sigma'-scaled local update, CoCoA+).
  void step_syscd(index_t i, double* vt) const { update_coordinate(form, i, alpha, vt, sigma); }
  // The same for a box dual under the margin rule, by thread t.
  void step_box(index_t i, double* vt, int t) {
    double* st = pg_stat.data() + std::size_t(t) * kStatStride;
    if (rule.step(form, i, alpha, vt, sigma, st[0], st[1])) return;
    left_out[static_cast<std::size_t>(i)] = 1;
    st[2] = 1;
  }
  /// Box duals, after an epoch under the margin rule: the samples that left dropped from the active set (and the
  /// set dealt again), the violations of the epoch kept for the next; returns whether a certificate is due now.
  bool box_epoch_done() {
    double hi = -std::numeric_limits<double>::infinity(), lo = std::numeric_limits<double>::infinity();
    bool out = false;
    for (int t = 0; t < T; ++t) {
      const double* st = pg_stat.data() + std::size_t(t) * kStatStride;
      hi = std::max(hi, st[0]);
      lo = std::min(lo, st[1]);
      out = out || st[2] != 0;
    }
    if (out) {
      active.keep_if([&](index_t i) { return left_out[static_cast<std::size_t>(i)] == 0; });
      deal();
    }
    return rule.epoch_done(hi, lo);
  }
  /// Box duals: every sample may leave again (after a certificate has selected the active set anew).
  void box_reset_left_out() { std::fill(left_out.begin(), left_out.end(), static_cast<unsigned char>(0)); }
  // One coordinate step of PASSCoDe on the shared v: gather v's entries of row i with relaxed atomic loads into
  // the thread's scratch (the form's inner product reads v only at row i's indices), step, then add atomically
  // (fetch_add) or wildly (load + store, an update may be lost).
  void step_passcode(index_t i, double* scratch) const {
    const offset_t k0 = A.offsets[i], k1 = A.offsets[i + 1];
    for (offset_t k = k0; k < k1; ++k)
      scratch[idx[k]] = std::atomic_ref<double>(v[idx[k]]).load(std::memory_order_relaxed);
    const double a_new = form.coordinate_step(i, alpha[i], scratch, 1.0);
    const double delta = a_new - alpha[i];
    if (delta == 0) return;
    alpha[i] = a_new;
    for (offset_t k = k0; k < k1; ++k) {
      std::atomic_ref<double> r(v[idx[k]]);
      const double inc = delta * entry(val, form.lo, k);
      if (wild) r.store(r.load(std::memory_order_relaxed) + inc, std::memory_order_relaxed);
      else r.fetch_add(inc, std::memory_order_relaxed);
    }
  }
  // Bucket b of node k: entries [b B, min((b + 1) B, size)) of the node's active list.
  std::pair<const index_t*, const index_t*> bucket_range(int k, index_t b) const {
    const std::vector<index_t>& act = node_act[k];
    const std::size_t lo = static_cast<std::size_t>(b) * static_cast<std::size_t>(B);
    return {act.data() + lo, act.data() + std::min(act.size(), lo + std::size_t(B))};
  }
  // The coordinates of a bucket are visited in a fresh order every epoch (a shuffle of at most B positions, seeded
  // by the epoch and the bucket: the same on every run), so that the order inside a bucket is as random as the
  // sequential solver's while its rows stay together in memory.
  void run_bucket(int k, index_t b, double* buf, int t) {
    const auto [first, last] = bucket_range(k, b);
    index_t order[256];
    const auto n = static_cast<std::size_t>(last - first);
    const bool local = n <= std::size(order);
    if (local) {
      std::copy(first, last, order);
      SplitMix64 r(epoch_seed ^ (0x9E3779B97F4A7C15ull * (static_cast<std::uint64_t>(b) + 1) + std::uint64_t(k)));
      shuffle(std::span<index_t>(order, n), r);
    }
    const index_t* it = local ? order : first;
    for (std::size_t q = 0; q < n; ++q) {
      if constexpr (Form::kBoxDual) {
        if (box_shrink) {
          step_box(it[q], buf, t);
          continue;
        }
      }
      if (syscd) step_syscd(it[q], buf);
      else step_passcode(it[q], buf);
    }
  }
  [[gnu::always_inline]] void prefetch(int k, index_t b) const {
    const auto [first, last] = bucket_range(k, b);
    if (first == last) return;
    if (pos_of.empty()) prefetch_bucket(A, *first, *(last - 1) + 1);
    else prefetch_rows(A, first, last);
  }
  // What prefetch() needs to find bucket b's rows, and the steps' scalars: the bucket's row offsets, alpha entries and
  // the form's per-coordinate scalars (prefetch_scalars, forms.hpp).
  [[gnu::always_inline]] void prefetch_scalars_of(int k, index_t b) const {
    const auto [first, last] = bucket_range(k, b);
    if (first == last) return;
    if (pos_of.empty()) {  // copied order: the bucket's coordinates are consecutive
      prefetch_scalars(form, *first, alpha);
      prefetch_scalars(form, *(last - 1), alpha);
    } else {
      for (const index_t* it = first; it != last; ++it) prefetch_scalars(form, *it, alpha);
    }
  }
  // The prefetches before the bucket at position p of node k's list pk (ending at `end`), at the distances of
  // forms.hpp prefetch_ahead counted in buckets (D = kPrefetchRows / B): the rows D buckets ahead, their offsets and
  // scalars 2 D ahead, and the bucket's entries of the active list (bucket_range's) 3 D ahead. One bucket ahead
  // (what there was before) is 2 rows at the automatic B = 2: the rows, offsets and scalars then missed the cache in
  // the step itself (bench/results/prefetch.md, "SySCD's buckets").
  [[gnu::always_inline]] void prefetch_ahead(int k, const std::vector<index_t>& pk, std::int64_t p,
                                             std::int64_t end) const {
    const std::int64_t D = std::max<std::int64_t>(1, static_cast<std::int64_t>(kPrefetchRows) / B);
    if (p + 3 * D < end)
      __builtin_prefetch(node_act[k].data() + std::size_t(pk[std::size_t(p + 3 * D)]) * std::size_t(B), 0, 1);
    if (p + 2 * D < end) prefetch_scalars_of(k, pk[std::size_t(p + 2 * D)]);
    if (p + D < end) prefetch(k, pk[std::size_t(p + D)]);
  }

  /// Part `part` of `parts` of one epoch's coordinate steps on (alpha_, v_). Part 0 starts the epoch (virtual
  /// nodes: a fresh split of the blocks, from the second epoch on; fresh bucket orders). Thread t works through piece
  /// `part` of its list cut into `parts` consecutive pieces (deterministic); with work stealing (non-deterministic,
  /// whole epochs only: parts = 1) it then steals what is left of the lists of its node's other threads.
  void epoch(double* alpha_, double* v_, int part = 0, int parts = 1) {
    alpha = alpha_;
    v = v_;
    if (part == 0) {
      if (redeal && epochs_run > 0) deal();
      ++epochs_run;
      for (int k = 0; k < K; ++k) shuffle(std::span<index_t>(perm[k]), rng);
      epoch_seed = rng.next();
    }
    for (int t = 0; t < T; ++t) cursor[t].store(list_lo[t], std::memory_order_relaxed);
    if (box_shrink && part == 0)
      for (int t = 0; t < T; ++t) {
        double* st = pg_stat.data() + std::size_t(t) * kStatStride;
        st[0] = -std::numeric_limits<double>::infinity();
        st[1] = std::numeric_limits<double>::infinity();
        st[2] = 0;
      }
    run_tasks(T, det, [&](int t) {
      const int k = node_of[t];
      std::optional<numa::ScopedThreadBind> bind;
      if (pin) bind.emplace(k % phys);
      double* buf = rep[t].data();
      if (syscd && d > 0) std::memcpy(buf, v, d * sizeof(double));
      const std::vector<index_t>& pk = perm[k];
      if (det || parts > 1) {
        const std::int64_t len = list_hi[t] - list_lo[t];
        const std::int64_t p0 = list_lo[t] + len * part / parts, p1 = list_lo[t] + len * (part + 1) / parts;
        for (std::int64_t p = p0; p < p1; ++p) {
          prefetch_ahead(k, pk, p, p1);
          run_bucket(k, pk[p], buf, t);
        }
        return;
      }
      const int Tk = t_lo[k + 1] - t_lo[k];
      for (int s = 0; s < Tk; ++s) {
        const int owner = t_lo[k] + (t - t_lo[k] + s) % Tk;
        const std::int64_t hi = list_hi[owner];
        for (;;) {
          const std::int64_t p = cursor[owner].fetch_add(1, std::memory_order_relaxed);
          if (p >= hi) break;
          prefetch_ahead(k, pk, p, hi);
          run_bucket(k, pk[p], buf, t);
        }
      }
    });
  }

  // dv = sum_t (v_t - v) / merge_div, in parallel over ranges of v; two levels when K > 1. The order of every sum is
  // fixed (thread id, then node id), so the merge is deterministic whatever the schedule.
  void merge(const double* vm) {
    if (d == 0) return;
    if (K == 1) {
      for_ranges(d, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t j = lo; j < hi; ++j) {
          double s = 0;
          for (int t = 0; t < T; ++t) s += rep[t].data()[j] - vm[j];
          dv[j] = s / merge_div;
        }
      });
      return;
    }
    const std::int64_t nvc = static_cast<std::int64_t>((d + kVecGrain - 1) / kVecGrain);
    parallel_chunks(K * nvc, [&](std::int64_t c) {  // level 1: each node's threads into its node replica
      const int k = static_cast<int>(c / nvc);
      std::optional<numa::ScopedThreadBind> bind;
      if (pin) bind.emplace(k % phys);
      double* nr = node_rep[k].data();
      const std::size_t lo = static_cast<std::size_t>(c % nvc) * kVecGrain, hi = std::min(d, lo + kVecGrain);
      for (std::size_t j = lo; j < hi; ++j) {
        double s = 0;
        for (int t = t_lo[k]; t < t_lo[k + 1]; ++t) s += rep[t].data()[j] - vm[j];
        nr[j] = s;
      }
    });
    for_ranges(d, [&](std::size_t lo, std::size_t hi) {  // level 2: the node replicas into dv
      for (std::size_t j = lo; j < hi; ++j) {
        double s = 0;
        for (int k = 0; k < K; ++k) s += node_rep[k].data()[j];
        dv[j] = s / merge_div;
      }
    });
  }
};

/// The single-process solver on `form`, whose coordinates are in a random order (solve_parallel_cpu makes it):
/// physically, `to_original[p]` the original index of coordinate p (for the test hook and the messages), alpha_start
/// permuted; or listed in `order` (ReplicaEpochs), to_original empty (the form is the original one).
template <class Form>
SolveResult run_parallel(const Form& form, const SolverOptions& o, const int T, std::span<const index_t> to_original,
                         std::vector<double> alpha_start, std::vector<index_t> order) {
  const CsrMatrix& A = *form.A;
  const index_t m = form.n_coords();
  const std::size_t d = static_cast<std::size_t>(form.dim());
  const bool syscd = o.solver == SolverKind::syscd;
  const bool wild = o.solver == SolverKind::passcode_wild;
  // SySCD's T replicas merge by CoCoA+ (sigma' = T, gamma = 1 and up: --aggregation fixed, primal coordinate
  // descent, and ridge) or, in the dual with adaptive aggregation, each at a sigma' between 1 and T with gamma
  // searched from the safe sigma' / T up (MergePlan::between; sigma' by loss, replica_sigma, or
  // SolverOptions::replica_sigma; docs/parallel-cpu.md, "sigma' between 1 and T"); PASSCoDe steps on v itself.
  const MergePlan plan =
      !syscd ? MergePlan::cocoa(1.0)
      : o.adaptive_aggregation && Form::formulation == Formulation::dual
          ? replica_merge_plan(Form::kBoxDual, T,
                               o.replica_sigma > 0 ? o.replica_sigma : replica_sigma(Form::LossP::id, T))
          : MergePlan::cocoa(static_cast<double>(T));
  const double sigma = plan.step_sigma;
  // Merges per epoch: the replicas are merged (and the merged step searched) after each of `merges` parts of an
  // epoch, so that a replica is at most 1/merges of an epoch behind the others' steps. A merge costs O(m_active + T d)
  // (the sum of the replicas, the scan for changed coordinates, the search's passes, alpha_old brought up to date)
  // in a few parallel regions: as many merges as keep that below a quarter of a part's nonzeros and each part at
  // 2^20 nonzeros or more, at most 4, set again from the active set after every certificate (and every epoch of the
  // margin rule).
  // Measured at 2 threads, relative gap 1e-4, 4 merges against 1 (docs/parallel-cpu.md, "Merges per epoch"): fewer
  // epochs and less time for ridge and logistic on sparse 200,000 x 100,000. The box duals keep one merge: the hinge
  // needed fewer epochs but more time, the squared hinge one epoch less but more time once the merges' search had
  // become cheap (their epochs under the margin rule are cheap). The dual formulation only (primal coordinate
  // descent was not measured), deterministic runs only (work stealing runs whole epochs).
  const bool multi_merge = syscd && T > 1 && o.deterministic.value_or(true) &&
                           Form::formulation == Formulation::dual && !Form::kBoxDual;
  auto merges_for = [&](std::int64_t active_nnz, std::int64_t active_m) {
    if (!multi_merge) return 1;
    const std::int64_t by_cost = active_nnz / (4 * (active_m + std::int64_t(T) * std::int64_t(d)));
    return static_cast<int>(std::clamp<std::int64_t>(std::min<std::int64_t>(by_cost, active_nnz >> 20), 1, 4));
  };
  int merges = merges_for(A.nnz(), m);

  SolveResult res;
  EpochDriver driver(o, res, Form::formulation);
  if (form.lo) driver.float64_values();
  res.alpha = std::move(alpha_start);
  double* alpha = res.alpha.data();
  std::vector<double> v = parallel_shared_vector(form, res.alpha, T);
  ReplicaEpochs<Form> eng(form, o, T, alpha, sigma, sigma, std::move(order));
  ActiveSet& active = eng.active;
  const std::vector<double>& dv = eng.dv;
  // The box duals' margin rule (shrinking.hpp MarginRule, ReplicaEpochs::step_box): SySCD only (PASSCoDe and a
  // CoCoA+ rank's local solver keep the gap rule alone).
  const bool box = Form::kBoxDual && syscd && o.shrinking;
  bool certify_now = false;  // the active samples' violations are within eng.rule.tol
  std::vector<double> inners(box ? static_cast<std::size_t>(m) : 0);
  if (box) {
    eng.box_shrink = true;
    eng.left_out.assign(static_cast<std::size_t>(m), 0);
    eng.pg_stat.assign(static_cast<std::size_t>(T) * ReplicaEpochs<Form>::kStatStride, 0.0);
  }
  // Adaptive aggregation (aggregate_step.hpp; docs/parallel-cpu.md, "Adaptive aggregation"): gamma by a line search
  // on the objective along the merged direction, never worse than the plan's safe step.
  const bool search = syscd && T > 1 && o.adaptive_aggregation;
  std::vector<double> alpha_old(search ? static_cast<std::size_t>(m) : 0);
  std::vector<index_t> changed;
  std::vector<std::vector<index_t>> changed_parts;  // per chunk of the active list
  AggregationScratch agg;
  // alpha_old equals alpha at the start of every part: copied once, then after each merge for the coordinates it
  // changed (and wholly after the test hook, which may change any). The scan for changed coordinates runs over the
  // active list in for_ranges' fixed chunks, in parallel (it was a serial pass, with a serial copy of the active
  // alpha before every part: most of the merge's time).
  if (search) std::copy(res.alpha.begin(), res.alpha.end(), alpha_old.begin());
  // Returns gamma; v is left at v_old (the caller adds gamma dv), alpha at alpha_old + gamma (alpha - alpha_old).
  auto aggregate = [&]() -> double {
    const std::vector<index_t>& act = active.coords();
    const std::size_t n_ch = (act.size() + kVecGrain - 1) / kVecGrain;
    changed_parts.resize(std::max(changed_parts.size(), n_ch));
    for_ranges(act.size(), [&](std::size_t lo, std::size_t hi) {
      std::vector<index_t>& out = changed_parts[lo / kVecGrain];
      out.clear();
      for (std::size_t q = lo; q < hi; ++q)
        if (alpha[act[q]] != alpha_old[act[q]]) out.push_back(act[q]);
    });
    changed.clear();  // in the order of the active list
    for (std::size_t ch = 0; ch < n_ch; ++ch)
      changed.insert(changed.end(), changed_parts[ch].begin(), changed_parts[ch].end());
    const double gamma = aggregate_step(form, changed, alpha_old.data(), alpha, v, dv, plan, agg);
    for_ranges(changed.size(), [&](std::size_t lo, std::size_t hi) {
      for (std::size_t k = lo; k < hi; ++k) alpha_old[changed[k]] = alpha[changed[k]];
    });
    return gamma;
  };

  // The test hook sees the coordinate variables in the original order (it may change them).
  std::vector<double> hook_alpha;
  auto run_hook = [&](int epoch) {
    if (!o.after_epoch) return;
    if (to_original.empty()) {
      o.after_epoch(epoch, std::span<double>(res.alpha), std::span<double>(v));
      return;
    }
    hook_alpha.resize(static_cast<std::size_t>(m));
    for (index_t p = 0; p < m; ++p) hook_alpha[to_original[p]] = alpha[p];
    o.after_epoch(epoch, std::span<double>(hook_alpha), std::span<double>(v));
    for (index_t p = 0; p < m; ++p) alpha[p] = hook_alpha[to_original[p]];
  };
  // A non-finite coordinate variable or entry of v is named by its original index.
  auto check_state = [&](int epoch) {
    if (to_original.empty()) {
      driver.check_state(epoch, res.alpha, v);
      return;
    }
    std::size_t bad = SIZE_MAX;  // the smallest original index holding a non-finite value
    for (index_t p = 0; p < m; ++p)
      if (!std::isfinite(alpha[p])) bad = std::min<std::size_t>(bad, to_original[p]);
    if (bad != SIZE_MAX) {
      index_t p = 0;
      while (to_original[p] != static_cast<index_t>(bad)) ++p;
      driver.check_coordinate(epoch, bad, alpha[p]);
    }
    driver.check_state(epoch, {}, v);
  };

  std::vector<double> gaps(static_cast<std::size_t>(m));
  CertificateSchedule schedule(o.certificate_every);
  auto resync = [&] {
    v = parallel_shared_vector(form, res.alpha, T);
    return parallel_certificate(form, res.alpha, v, gaps.data(), box ? inners.data() : nullptr);
  };
  int epoch = 0, last_resync = 0;
  // v == A alpha (re-synchronized) and `cert` certifies it. No certificate of the start: the first epoch's replaces
  // it (a pass over the data, discarded); where no epoch runs (max_epochs 0), the final re-synchronization makes it.
  bool exact = false;
  Certificate cert;
  while (driver.budget_left(epoch)) {
    for (int part = 0; part < merges; ++part) {
      eng.epoch(alpha, v.data(), part, merges);  // part 0: virtual nodes get a fresh split of the blocks
      if (syscd) {
        eng.merge(v.data());
        const double gamma = search ? aggregate() : 1.0;
        for_ranges(d, [&](std::size_t lo, std::size_t hi) {
          for (std::size_t j = lo; j < hi; ++j) v[j] += gamma * dv[j];
        });
      }
    }
    if constexpr (Form::kBoxDual)
      if (box) {
        certify_now = eng.box_epoch_done();
        if (multi_merge) merges = merges_for(coords_nnz(A, active.coords()), static_cast<std::int64_t>(active.coords().size()));
      }
    ++epoch;
    exact = false;
    run_hook(epoch);
    if (search && o.after_epoch) std::copy(res.alpha.begin(), res.alpha.end(), alpha_old.begin());
    check_state(epoch);
    const bool stop = driver.poll_interrupt();
    if (!schedule.due(epoch) && !certify_now && !stop && driver.budget_left(epoch)) continue;
    // The certificate refreshes every coordinate's gap; it is exact (after re-synchronizing v = A alpha in double)
    // when it claims convergence, every kResyncEvery epochs, on the last epoch, on an interrupt, and for wild (whose
    // v may have lost updates) always.
    // Where the re-synchronization is due whatever the certificate says, the certificate of the drifted v is not
    // computed (it was a second pass over the data, discarded: on the hinge most certificates re-synchronize).
    const bool resync_due = wild || epoch - last_resync >= kResyncEvery || !driver.budget_left(epoch) || stop;
    if (!resync_due) cert = parallel_certificate(form, res.alpha, v, gaps.data(), box ? inners.data() : nullptr);
    if (resync_due || !finite(cert) || relative_gap(cert) <= o.tol) {
      cert = resync();
      exact = true;
      last_resync = epoch;
    }
    if (driver.record(epoch, cert, res.alpha, v) != EpochDriver::Stop::none) break;
    const double target = o.tol * std::fabs(cert.primal);
    if constexpr (Form::kBoxDual) {
      if (box) {
        if (certify_now) eng.rule.missed();
        certify_now = false;
        active.update(0, m, gaps, cert.gap, target, true, [&](index_t i) {
          return eng.rule.keep(form, i, alpha[i], inners[static_cast<std::size_t>(i)]);
        });
        eng.box_reset_left_out();
      }
    }
    if (!box) active.update(0, m, gaps, cert.gap, target, o.shrinking);
    const offset_t nnz = coords_nnz(A, active.coords());
    merges = merges_for(nnz, static_cast<std::int64_t>(active.coords().size()));
    eng.deal();
    schedule.after_certificate(epoch, cert.gap, target, nnz_share(A, nnz));
  }
  if (!exact) cert = resync();
  driver.finish(form, cert, v, epoch);
  return res;
}

}  // namespace

template <class Form>
Certificate parallel_certificate(const Form& f, std::span<const double> alpha, std::span<const double> v, double* gaps,
                                 double* inners) {
  const double* vp = v.data();
  const double* ap = alpha.data();
  const CertificateTerms shared = reduce(static_cast<index_t>(v.size()), [&](index_t lo, index_t hi) {
    return shared_terms(f, lo, hi, vp);
  });
  return f.finish(parallel_coordinate_terms(f, ap, vp, gaps, inners), shared);
}

template <class Form>
CertificateTerms parallel_coordinate_terms(const Form& f, const double* alpha, const double* v, double* gaps,
                                           double* inners, const double* v2, double* inners2) {
  return reduce(f.n_coords(), [&](index_t lo, index_t hi) {
    return coordinate_terms(f, lo, hi, alpha, v, gaps, inners, v2, inners2);
  });
}

template <class Form>
std::vector<double> parallel_shared_vector(const Form& form, std::span<const double> alpha, int n_parts) {
  const CsrMatrix& A = *form.A;
  const int P = std::max(1, static_cast<int>(std::min<std::int64_t>(n_parts, A.n_rows)));
  if (P == 1) return shared_vector(form, alpha);
  const std::size_t d = static_cast<std::size_t>(form.dim());
  const std::vector<index_t> rows = balanced_rows(A, P);
  std::vector<std::vector<double>> part(static_cast<std::size_t>(P));
  run_tasks(P, true, [&](int p) {
    std::vector<double>& acc = part[p];
    acc.assign(d, 0.0);  // first touch by the thread that scatters into it
    for (index_t i = rows[p]; i < rows[p + 1]; ++i)
      if (alpha[i] != 0) row_axpy(A, i, alpha[i], acc.data(), form.lo);
  });
  std::vector<double> v(d, 0.0);
  if (d == 0) return v;
  for_ranges(d, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t j = lo; j < hi; ++j) {
      double s = 0;
      for (int p = 0; p < P; ++p) s += part[p][j];
      v[j] = s;
    }
  });
  return v;
}

template <class Form>
SolveResult solve_parallel_cpu(const Form& form, const SolverOptions& o) {
  if (o.n_threads < 0) throw InvalidArgument(fmt::format("--threads: must be >= 0 (0 = all cores), got {}", o.n_threads));
  if (o.numa_nodes < 0)
    throw InvalidArgument(fmt::format("--numa-nodes: must be >= 0 (0 = the machine's topology), got {}", o.numa_nodes));
  if (o.bucket_size < 0)
    throw InvalidArgument(fmt::format("bucket size: must be >= 0 (0 = automatic), got {}", o.bucket_size));
  if (!valid_replica_sigma(o.replica_sigma))
    throw InvalidArgument(fmt::format("replica sigma': must be 0 (by loss) or a number >= 1, got {}", o.replica_sigma));
  if (o.solver == SolverKind::sequential) return solve_sequential(form, o);
  if (o.solver == SolverKind::newton || o.solver == SolverKind::automatic)
    throw InvalidArgument(fmt::format("solve_parallel_cpu: solver '{}' is not a parallel coordinate-descent solver "
                                      "(train() runs newton with solve_primal_newton and resolves auto)",
                                      solver_kind_name(o.solver)));
  if (o.deterministic.value_or(false) && o.solver != SolverKind::syscd)
    throw InvalidArgument(fmt::format(
        "--deterministic: solver '{}' updates one shared vector from racing threads, so it cannot be deterministic; "
        "use --solver syscd or sequential",
        solver_kind_name(o.solver)));
  // One seeded random permutation of the coordinates: contiguous buckets and node blocks of it are random sets
  // whatever the file's order (a file sorted by label). Long rows (listed_order): the coordinates are listed in that
  // order (ReplicaEpochs' `order`: a bucket's rows are read where they are); otherwise the data are physically
  // reordered once (PermutedForm) and the result is mapped back to the original order. Both visit the same
  // coordinates in the same sequence.
  const index_t m = form.n_coords();
  std::vector<index_t> perm = random_order(m, o.seed);
  SolveResult start;
  EpochDriver(o, start, Form::formulation).initial_alpha(form, start.alpha);
  if (listed_order(form, o))
    return in_solver_arena(o.n_threads, [&](int T) {
      return run_parallel(form, o, T, {}, std::move(start.alpha), std::move(perm));
    });
  std::vector<double> alpha0(static_cast<std::size_t>(m));
  for (index_t p = 0; p < m; ++p) alpha0[p] = start.alpha[perm[p]];
  SolveResult r = in_solver_arena(o.n_threads, [&](int T) {
    const PermutedForm<Form> pf(form, perm, [](std::size_t n, const auto& body) { for_ranges(n, body); });
    return run_parallel(pf.form, o, T, perm, std::move(alpha0), {});
  });
  std::vector<double> alpha(static_cast<std::size_t>(m));
  for (index_t p = 0; p < m; ++p) alpha[perm[p]] = r.alpha[p];
  r.alpha = std::move(alpha);
  // The primal weights are the coordinates themselves (the dual's w = v / (lambda n) does not depend on the order).
  if constexpr (Form::formulation == Formulation::primal) r.w = form.weights(r.alpha, {});
  return r;
}


template <class Form>
struct SyscdLocalSolver<Form>::Impl {
  std::vector<index_t> perm;  // the random order: position p holds coordinate perm[p]
  bool listed;                // listed_order: the rows stay where they are, else pf holds them in perm's order
  std::optional<PermutedForm<Form>> pf;
  std::vector<double> alpha;  // permuted (copied order) or in the original order (listed)
  int T;
  double outer;
  ReplicaEpochs<Form> eng;
  std::vector<index_t> pos;        // copied order: the position of coordinate i (set_active; empty until then)
  std::vector<unsigned char> on;   // set_active's scratch
  Impl(const Form& f, const SolverOptions& o, double outer_sigma)
      : perm(random_order(f.n_coords(), o.seed)), listed(listed_order(f, syscd_options(o))),
        pf(listed ? std::optional<PermutedForm<Form>>() : std::optional<PermutedForm<Form>>(std::in_place, f, perm)),
        alpha(static_cast<std::size_t>(f.n_coords()), 0.0), T(o.n_threads), outer(outer_sigma),
        eng(listed ? f : pf->form, syscd_options(o), o.n_threads, alpha.data(), outer_sigma * o.n_threads, o.n_threads,
            listed ? perm : std::vector<index_t>{}) {}
  static SolverOptions syscd_options(SolverOptions o) {
    o.solver = SolverKind::syscd;
    return o;
  }
};

template <class Form>
SyscdLocalSolver<Form>::SyscdLocalSolver(const Form& form, const SolverOptions& o, double outer_sigma) {
  if (o.n_threads < 1)
    throw InvalidArgument(fmt::format("SyscdLocalSolver: needs n_threads >= 1, got {}", o.n_threads));
  impl_ = std::make_unique<Impl>(form, o, outer_sigma);
}
template <class Form>
SyscdLocalSolver<Form>::~SyscdLocalSolver() = default;
template <class Form>
double SyscdLocalSolver<Form>::step_sigma() const {
  return impl_->outer * impl_->T;
}
template <class Form>
void SyscdLocalSolver<Form>::set_active(std::span<const index_t> coords) {
  Impl& s = *impl_;
  const std::size_t m = s.perm.size();
  if (!s.listed && s.pos.empty()) {
    s.pos.resize(m);
    for (std::size_t p = 0; p < m; ++p) s.pos[static_cast<std::size_t>(s.perm[p])] = static_cast<index_t>(p);
  }
  // The engine's coordinates are the original ones (listed) or their positions in the copied order.
  s.on.assign(m, 0);
  for (index_t i : coords) s.on[static_cast<std::size_t>(s.listed ? i : s.pos[static_cast<std::size_t>(i)])] = 1;
  s.eng.active.reset(0, static_cast<index_t>(m));
  s.eng.active.keep_if([&](index_t c) { return s.on[static_cast<std::size_t>(c)] != 0; });
  s.eng.deal();
}
template <class Form>
void SyscdLocalSolver<Form>::run(std::span<double> alpha, std::span<double> v_loc, int epochs) {
  Impl& s = *impl_;
  const std::size_t m = s.perm.size(), d = v_loc.size();
  if (s.listed) std::copy(alpha.begin(), alpha.end(), s.alpha.begin());
  else
    for (std::size_t p = 0; p < m; ++p) s.alpha[p] = alpha[s.perm[p]];
  in_solver_arena(s.T, [&](int) {
    for (int h = 0; h < epochs; ++h) {
      s.eng.epoch(s.alpha.data(), v_loc.data());
      s.eng.merge(v_loc.data());  // dv = sum_t (v_t - v_loc) / T = outer x (A delta alpha of the epoch)
      const double* dv = s.eng.dv.data();
      for_ranges(d, [&](std::size_t lo, std::size_t hi) {
        for (std::size_t j = lo; j < hi; ++j) v_loc[j] += dv[j];
      });
    }
  });
  if (s.listed) std::copy(s.alpha.begin(), s.alpha.end(), alpha.begin());
  else
    for (std::size_t p = 0; p < m; ++p) alpha[s.perm[p]] = s.alpha[p];
}

#define HETGLM_INSTANTIATE_PARALLEL(...)                                                                           \
  template SolveResult solve_parallel_cpu(const __VA_ARGS__&, const SolverOptions&);                             \
  template Certificate parallel_certificate(const __VA_ARGS__&, std::span<const double>, std::span<const double>, \
                                            double*, double*);                                                   \
  template CertificateTerms parallel_coordinate_terms(const __VA_ARGS__&, const double*, const double*, double*,   \
                                                      double*, const double*, double*);                          \
  template std::vector<double> parallel_shared_vector(const __VA_ARGS__&, std::span<const double>, int);          \
  template class SyscdLocalSolver<__VA_ARGS__>;

// One instantiation per form (HETGLM_FOR_EACH_FORM, forms.hpp), as for solve_sequential.
HETGLM_FOR_EACH_FORM(HETGLM_INSTANTIATE_PARALLEL)
#undef HETGLM_INSTANTIATE_PARALLEL

}  // namespace hetglm
