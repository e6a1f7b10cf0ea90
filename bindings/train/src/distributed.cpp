// SPDX-License-Identifier: Apache-2.0
// The distributed trainer's program (distributed.hpp, docs/mpi.md): each rank reads its byte range, the ranks agree
// on sizes and labels, the primal's columns are redistributed, solve_cocoa (solvers/cocoa.hpp) trains, and rank 0
// reports and writes the model. Only MPI rank 0 writes files.
#include "hetglm/distributed.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <mpi.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <tbb/info.h>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "hetglm/config.hpp"
#include "hetglm/error.hpp"
#include "hetglm/io.hpp"
#include "hetglm/libsvm.hpp"
#include "hetglm/model.hpp"
#include "hetglm/rng.hpp"
#include "hetglm/solvers/aggregation.hpp"
#include "hetglm/solvers/cocoa.hpp"
#include "hetglm/solvers/dispatch.hpp"
#include "hetglm/solvers/forms.hpp"
#include "hetglm/solvers/newton.hpp"
#include "hetglm/solvers/objective.hpp"
#include "hetglm/train.hpp"

namespace hetglm {
namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::json;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

constexpr int kExitTraining = 1;
constexpr int kExitUsage = 2;

struct Comm {
  int rank = 0, size = 1;
};

int code_of(const std::exception& e) { return exit_code_of(e); }
int agree(const Comm&, int code, const std::string& msg, bool rank0_only = false) {
  return agree_on_failure(code, msg, rank0_only);
}

// ----------------------------------------------------------------------------------------------------------------
// Loading: this rank's byte range of the file, aligned to line starts.

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

/// Reads exactly n bytes at `offset` into buf (pread, retried on EINTR); a file that ends before them is an error.
void pread_full(int fd, char* buf, std::size_t n, std::uint64_t offset, const std::string& path) {
  std::size_t done = 0;
  while (done < n) {
    const ssize_t r = ::pread(fd, buf + done, n - done, static_cast<off_t>(offset + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      throw IoError(fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    }
    if (r == 0) throw IoError(fmt::format("cannot read '{}': the file shrank while reading", path));
    done += static_cast<std::size_t>(r);
  }
}

std::string pread_range(int fd, std::uint64_t begin, std::uint64_t end, const std::string& path) {
  std::string out(end - begin, '\0');
  pread_full(fd, out.data(), out.size(), begin, path);
  return out;
}

/// The first line start at or after `pos`: pos itself when byte pos-1 is a newline, else one past the next newline.
std::uint64_t align_to_line(int fd, std::uint64_t pos, std::uint64_t size, const std::string& path) {
  if (pos == 0 || pos >= size) return std::min(pos, size);
  std::uint64_t p = pos - 1;
  constexpr std::uint64_t kChunk = 1 << 16;
  while (p < size) {
    const std::string buf = pread_range(fd, p, std::min(size, p + kChunk), path);
    const auto nl = buf.find('\n');
    if (nl != std::string::npos) return p + nl + 1;
    p += buf.size();
  }
  return size;
}

struct LocalPart {
  Dataset data;
  std::uint64_t begin = 0, end = 0;
  std::int64_t lines_before = 0;
  std::size_t parts = 0;  ///< TRAIN was this many part files (0: one plain file, read by byte ranges)
  bool tiny = false;      ///< float64: a value below kValuesLoMin was read (LibsvmOptions::values_lo_tiny)
};

/// TRAIN as a set of part files: a directory's regular files (names not starting with '.', in name order), or one
/// gzip file (which has no byte ranges).
std::vector<std::string> part_files(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;
    std::error_code ec2;
    if (e.is_regular_file(ec2)) files.push_back(e.path().string());
  }
  if (ec) throw IoError(fmt::format("cannot read the directory '{}': {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InvalidArgument(fmt::format("'{}': the directory holds no part files", dir));
  return files;
}

/// Appends the rows of `more` to `into` (n_cols the larger of the two).
void append_rows(Dataset& into, Dataset&& more) {
  if (into.X.n_rows == 0 && into.y.empty()) {
    into.X = std::move(more.X);
    into.y = std::move(more.y);
    return;
  }
  const offset_t base = into.X.nnz();
  if (into.X.has_lo() || more.X.has_lo()) {  // float64 values: a part whose values float32 holds has none (zeros)
    into.X.values_lo.resize(static_cast<std::size_t>(base), 0.0f);
    if (more.X.has_lo()) into.X.values_lo.insert(into.X.values_lo.end(), more.X.values_lo.begin(), more.X.values_lo.end());
    else into.X.values_lo.resize(static_cast<std::size_t>(base + more.X.nnz()), 0.0f);
  }
  into.X.indices.insert(into.X.indices.end(), more.X.indices.begin(), more.X.indices.end());
  into.X.values.insert(into.X.values.end(), more.X.values.begin(), more.X.values.end());
  for (index_t i = 0; i < more.X.n_rows; ++i) into.X.offsets.push_back(base + more.X.offsets[i + 1]);
  into.X.n_rows += more.X.n_rows;
  into.X.n_cols = std::max(into.X.n_cols, more.X.n_cols);
  into.y.insert(into.y.end(), more.y.begin(), more.y.end());
}

/// A rank's byte range [pos, end) of a plain file as read_libsvm_stream's source: pread in the reader's blocks, so
/// that the range's text is never held whole (it was, before: the text beside the data it parses to, 2.8x the data's
/// bytes at the peak on a generated 2,000,000 x 100,000 set, and a third of the reading time spent faulting in and
/// zeroing the text's fresh pages). Counts the newlines it hands out, for the global line numbers.
struct RangeSource {
  int fd;
  std::uint64_t pos, end;
  const std::string& path;
  std::int64_t newlines = 0;

  std::size_t operator()(char* buf, std::size_t n) {
    n = static_cast<std::size_t>(std::min<std::uint64_t>(n, end - pos));
    pread_full(fd, buf, n, pos, path);
    newlines += std::count(buf, buf + n, '\n');
    pos += n;
    return n;
  }
  /// The newlines of the rest of the range (after a parse error: the ranks after this one number their lines
  /// from the whole range's count).
  void count_rest() {
    std::vector<char> buf(std::size_t{1} << 20);
    while (pos < end) (*this)(buf.data(), buf.size());
  }
};

/// Reads and parses this rank's part: its byte range of a plain file (streamed, RangeSource), or its part files
/// (part p to rank p mod K). Collective (MPI_Exscan for the global line numbers, once the range is read): every rank
/// calls it once, and it reports its own failure through `code`/`msg` instead of throwing.
LocalPart load_part(const Comm& c, const DistributedArgs& a, int& code, std::string& msg) {
  LocalPart part;
  Fd f;                            // the plain file, read by byte ranges
  std::vector<std::string> parts;  // non-empty: TRAIN is a set of part files, part p read whole by rank p mod K
  try {
    struct stat pst {};
    if (::stat(a.train_file.c_str(), &pst) == 0 && S_ISDIR(pst.st_mode)) parts = part_files(a.train_file);
  } catch (const std::exception& e) {
    code = code_of(e);
    msg = e.what();
  }
  bool gzip_head = false;  // the range starts with gzip's magic bytes (a line of garbage: parsed as text below)
  bool plain = false;      // this rank opened TRAIN as a regular file
  std::uint64_t size = 0;
  if (parts.empty() && code == 0) try {
    f.fd = ::open(a.train_file.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.fd < 0) throw IoError(fmt::format("cannot open '{}': {}", a.train_file, std::strerror(errno)));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) throw IoError(fmt::format("cannot read '{}': {}", a.train_file, std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
      throw IoError(fmt::format("cannot read '{}': --distributed reads byte ranges, so TRAIN must be a regular file",
                                a.train_file));
    size = static_cast<std::uint64_t>(st.st_size);
    plain = true;
  } catch (const std::exception& e) {
    code = code_of(e);
    msg = e.what();
  }
  // Every rank cuts its range from rank 0's size: with each rank's own fstat, a file that grew while the ranks
  // opened it gave overlapping ranges (rows read twice, line numbers off) and a silent exit 0. A file that shrank
  // below it is "the file shrank while reading" on the ranks that reach its end.
  MPI_Bcast(&size, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  if (plain && code == 0) try {
    if (size >= 2) {
      const std::string magic = pread_range(f.fd, 0, 2, a.train_file);
      if (static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b)
        parts = {a.train_file};  // no byte ranges in a gzip stream: one part, read by rank 0
    }
    if (parts.empty()) {
      const auto nominal = [&](int r) {
        return static_cast<std::uint64_t>((static_cast<unsigned __int128>(size) * r) / static_cast<unsigned>(c.size));
      };
      part.begin = align_to_line(f.fd, nominal(c.rank), size, a.train_file);
      part.end = align_to_line(f.fd, nominal(c.rank + 1), size, a.train_file);
      if (part.end < part.begin) part.end = part.begin;
      if (part.end - part.begin >= 2) {
        const std::string head = pread_range(f.fd, part.begin, part.begin + 2, a.train_file);
        gzip_head = static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
      }
    }
  } catch (const std::exception& e) {
    code = code_of(e);
    msg = e.what();
  }
  // The range's newlines (global line numbers: the ranks before this one's), and its parse error, whose line is
  // made global once they are known.
  std::int64_t nl = 0, before = 0;
  std::optional<ParseError> parse_error;
  if (code == 0) try {
    LibsvmOptions lo;
    lo.zero_based = a.zero_based;
    lo.n_features = a.n_features;
    lo.n_threads = a.threads;
    // At a tol below kFloat64Tol the values to double precision, as in one process (run() then makes every rank
    // agree on keeping them).
    lo.float64 = a.opt.solver.tol < kFloat64Tol;
    lo.values_lo_tiny = &part.tiny;
    lo.memory_limit = a.opt.memory_limit;  // --memory-limit: this rank's budget for what it reads
    lo.memory_limit_name = "--memory-limit";
    if (!parts.empty()) {  // read_libsvm's messages name the part file and its own line
      for (std::size_t p = static_cast<std::size_t>(c.rank); p < parts.size(); p += static_cast<std::size_t>(c.size))
        append_rows(part.data, read_libsvm(parts[p], lo));
      part.parts = parts.size();
    } else if (gzip_head) {  // read_libsvm_stream would take it for gzip data: the text itself, as one string
      const std::string text = pread_range(f.fd, part.begin, part.end, a.train_file);
      nl = std::count(text.begin(), text.end(), '\n');
      try {
        part.data = parse_libsvm(text, a.train_file, lo);
      } catch (const ParseError& e) {
        parse_error.emplace(e);
      }
    } else {
      // Whatever stops the parse, the rest of the range is counted, so the ranks after this one still number
      // their lines from the whole range (a read error there leaves the count short: its own message says so).
      RangeSource src{f.fd, part.begin, part.end, a.train_file};
      const auto count_rest = [&] {
        try {
          src.count_rest();
        } catch (const std::exception&) {
        }
        nl = src.newlines;
      };
      try {
        part.data = read_libsvm_stream(std::ref(src), a.train_file, lo);
      } catch (const ParseError& e) {
        parse_error.emplace(e);
      } catch (const MemoryLimitError& e) {  // its line and bytes are the range's own: say so
        count_rest();
        throw MemoryLimitError(fmt::format("{} (in bytes {}..{} of the file, read by rank {}: line and bytes counted "
                                           "from byte {})",
                                           e.what(), part.begin, part.end, c.rank, part.begin));
      } catch (...) {
        count_rest();
        throw;
      }
      count_rest();
    }
  } catch (const std::exception& e) {
    code = code_of(e);
    msg = e.what();
  }
  MPI_Exscan(&nl, &before, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  part.lines_before = c.rank == 0 ? 0 : before;
  if (parse_error && code == 0) {
    const ParseError& e = *parse_error;
    const ParseError g(e.file(), e.line() + part.lines_before, e.column(),
                       fmt::format("{} (bytes {}..{} of the file, read by rank {})", e.message(), part.begin, part.end,
                                   c.rank));
    code = code_of(g);
    msg = g.what();
  }
  return part;
}

/// --formulation under --distributed, before the data is read. nullopt: --formulation and --solver auto for logistic
/// and squared hinge with the L2 penalty, where the single process chooses between dual SDCA and primal Newton by
/// newton_or_dual (train.hpp); the distributed trainer decides by the same function once the data is loaded (dual
/// CoCoA+ or distributed Newton). Otherwise the forced formulation, the primal for --solver newton, or the dual for
/// the other L2 cases (ridge and --solver sequential / syscd: the single process's trial runs need the whole
/// matrix). `reason` says which.
std::optional<Formulation> pick_formulation(const TrainOptions& o, const ModelSpec& spec, std::string& reason) {
  const std::optional<Formulation> f = forced_formulation(spec, o.problem.formulation);
  if (o.solver.solver == SolverKind::newton) {
    if (f && *f == Formulation::dual)
      throw InvalidArgument("--solver newton: runs the primal formulation only; drop --formulation dual");
    if (spec.penalty != Penalty::l2 || !is_smooth(spec.loss))
      throw InvalidArgument(fmt::format("--solver newton: under --distributed Newton trains the smooth losses with the "
                                        "L2 penalty only (logistic, squared-hinge, ridge, huber), not {} with penalty {}",
                                        spec.name, penalty_name(spec.penalty)));
    reason = "requested with --solver newton (primal only)";
    return Formulation::primal;
  }
  if (f) {
    reason = o.problem.formulation != FormulationRequest::automatic
                 ? fmt::format("requested with --formulation {}", formulation_name(*f))
             : *f == Formulation::primal ? fmt::format("penalty {} has no dual (SDCA) form", penalty_name(spec.penalty))
                                         : std::string("the hinge loss is not smooth: no primal coordinate descent");
    return *f;
  }
  if (o.solver.solver == SolverKind::automatic && auto_newton_loss(spec)) return std::nullopt;
  reason = "auto under --distributed: the dual for the L2 penalty (the single process's trial runs need the whole "
           "matrix)";
  return Formulation::dual;
}

/// The distributed truncated Newton (Zhuang, Chin, Juan, Lin 2015) where the single-process auto picks Newton: the
/// primal of the smooth losses with the L2 penalty (logistic, squared hinge, ridge: auto_newton_loss), or --solver
/// newton.
bool pick_newton(const TrainOptions& o, const ModelSpec& spec, Formulation fk) {
  if (fk != Formulation::primal || spec.penalty != Penalty::l2 || !is_smooth(spec.loss)) return false;
  return o.solver.solver == SolverKind::newton || (o.solver.solver == SolverKind::automatic && auto_newton_loss(spec));
}

/// Column redistribution for the primal: rows (local, this rank's samples starting at global row `row_off`) ->
/// this rank's features (col_owner[j] == rank, in ascending order; col_local[j] = the position of j among its
/// owner's features) as a CSR of X^T over all N samples. f64 (the same on every rank): X's values_lo travel too.
CsrMatrix redistribute_columns(const Comm& c, const CsrMatrix& X, index_t row_off, index_t N,
                               const std::vector<int>& col_owner, const std::vector<index_t>& col_local,
                               index_t n_mine, bool f64, std::uint64_t& bytes_moved) {
  const int K = c.size;
  auto owner = [&](index_t j) { return col_owner[j]; };
  std::vector<int> scount(K, 0), rcount(K, 0), sdispl(K, 0), rdispl(K, 0);
  for (offset_t k = 0; k < X.nnz(); ++k) ++scount[owner(X.indices[k])];
  MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (int k = 1; k < K; ++k) {
    sdispl[k] = sdispl[k - 1] + scount[k - 1];
    rdispl[k] = rdispl[k - 1] + rcount[k - 1];
  }
  const std::size_t stotal = static_cast<std::size_t>(sdispl[K - 1]) + scount[K - 1];
  const std::size_t rtotal = static_cast<std::size_t>(rdispl[K - 1]) + rcount[K - 1];
  std::vector<index_t> srow(stotal), scol(stotal), rrow(rtotal), rcol(rtotal);
  std::vector<float> sval(stotal), rval(rtotal), slo(f64 ? stotal : 0), rlo(f64 ? rtotal : 0);
  std::vector<int> pos = sdispl;
  for (index_t i = 0; i < X.n_rows; ++i)
    for (offset_t k = X.offsets[i]; k < X.offsets[i + 1]; ++k) {
      const int o = owner(X.indices[k]);
      const int p = pos[o]++;
      srow[p] = row_off + i;
      scol[p] = col_local[X.indices[k]];
      sval[p] = X.values[k];
      if (f64) slo[p] = X.has_lo() ? X.values_lo[k] : 0.0f;
    }
  MPI_Alltoallv(srow.data(), scount.data(), sdispl.data(), MPI_INT32_T, rrow.data(), rcount.data(), rdispl.data(),
                MPI_INT32_T, MPI_COMM_WORLD);
  MPI_Alltoallv(scol.data(), scount.data(), sdispl.data(), MPI_INT32_T, rcol.data(), rcount.data(), rdispl.data(),
                MPI_INT32_T, MPI_COMM_WORLD);
  MPI_Alltoallv(sval.data(), scount.data(), sdispl.data(), MPI_FLOAT, rval.data(), rcount.data(), rdispl.data(),
                MPI_FLOAT, MPI_COMM_WORLD);
  if (f64)
    MPI_Alltoallv(slo.data(), scount.data(), sdispl.data(), MPI_FLOAT, rlo.data(), rcount.data(), rdispl.data(),
                  MPI_FLOAT, MPI_COMM_WORLD);
  bytes_moved = (stotal - static_cast<std::size_t>(scount[c.rank])) * (f64 ? 16 : 12);
  // Stable counting sort by local feature: entries arrive by source rank, each in row order, so rows stay sorted.
  CsrMatrix t;
  t.n_rows = n_mine;
  t.n_cols = N;
  t.offsets.assign(static_cast<std::size_t>(t.n_rows) + 1, 0);
  for (std::size_t k = 0; k < rtotal; ++k) ++t.offsets[rcol[k] + 1];
  for (index_t j = 0; j < t.n_rows; ++j) t.offsets[j + 1] += t.offsets[j];
  t.indices.resize(rtotal);
  t.values.resize(rtotal);
  if (f64) t.values_lo.resize(rtotal);
  std::vector<offset_t> fill(t.offsets.begin(), t.offsets.end() - 1);
  for (std::size_t k = 0; k < rtotal; ++k) {
    const offset_t p = fill[rcol[k]]++;
    t.indices[p] = rrow[k];
    t.values[p] = rval[k];
    if (f64) t.values_lo[p] = rlo[k];
  }
  return t;
}

/// The rank that owns global index g under --partition random: splitmix64 of (seed, g) mapped onto [0, K) by a
/// multiply-high, so every rank gets a uniformly random part whatever the order of the file.
int hashed_owner(std::uint64_t seed, std::int64_t g, int K) {
  SplitMix64 h(seed * 0xD1B54A32D192ED03ULL + static_cast<std::uint64_t>(g));
  return static_cast<int>((static_cast<unsigned __int128>(h.next()) * static_cast<unsigned>(K)) >> 64);
}

/// Dual, --partition random: this rank's rows (global indices row_off ..) and labels are sent to hashed_owner of
/// their global index (one MPI_Alltoall of the counts, then one MPI_Alltoallv each for the row lengths, the labels,
/// the indices and the values, and with f64 (the same on every rank) one more for the values_lo). Rows arrive by
/// source rank, each in file order, i.e. in global order.
void redistribute_rows(const Comm& c, CsrMatrix& X, std::vector<double>& y, index_t row_off, std::uint64_t seed,
                       bool f64, std::uint64_t& bytes_moved) {
  const int K = c.size;
  std::vector<int> owner(static_cast<std::size_t>(X.n_rows));
  std::vector<int> scnt(2 * K, 0), rcnt(2 * K, 0);  // per rank: rows, nonzeros
  for (index_t i = 0; i < X.n_rows; ++i) {
    const int o = owner[i] = hashed_owner(seed, std::int64_t(row_off) + i, K);
    ++scnt[2 * o];
    scnt[2 * o + 1] += static_cast<int>(X.offsets[i + 1] - X.offsets[i]);
  }
  MPI_Alltoall(scnt.data(), 2, MPI_INT, rcnt.data(), 2, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> sr(K), rr(K), sz(K), rz(K), srd(K, 0), rrd(K, 0), szd(K, 0), rzd(K, 0);
  for (int k = 0; k < K; ++k) sr[k] = scnt[2 * k], sz[k] = scnt[2 * k + 1], rr[k] = rcnt[2 * k], rz[k] = rcnt[2 * k + 1];
  for (int k = 1; k < K; ++k) {
    srd[k] = srd[k - 1] + sr[k - 1], rrd[k] = rrd[k - 1] + rr[k - 1];
    szd[k] = szd[k - 1] + sz[k - 1], rzd[k] = rzd[k - 1] + rz[k - 1];
  }
  const std::size_t rrows = static_cast<std::size_t>(rrd[K - 1]) + rr[K - 1];
  const std::size_t rnnz = static_cast<std::size_t>(rzd[K - 1]) + rz[K - 1];
  std::vector<int> slen(static_cast<std::size_t>(X.n_rows)), rlen(rrows);
  std::vector<double> sy(static_cast<std::size_t>(X.n_rows)), ry(rrows);
  std::vector<index_t> sidx(static_cast<std::size_t>(X.nnz()));
  std::vector<float> sval(static_cast<std::size_t>(X.nnz())), slo(f64 ? sval.size() : 0);
  {
    std::vector<int> prow = srd, pnz = szd;
    for (index_t i = 0; i < X.n_rows; ++i) {
      const int o = owner[i];
      const int q = prow[o]++;
      slen[q] = static_cast<int>(X.offsets[i + 1] - X.offsets[i]);
      sy[q] = y[i];
      for (offset_t k = X.offsets[i]; k < X.offsets[i + 1]; ++k) {
        const int p = pnz[o]++;
        sidx[p] = X.indices[k];
        sval[p] = X.values[k];
        if (f64) slo[p] = X.has_lo() ? X.values_lo[k] : 0.0f;
      }
    }
  }
  const index_t n_cols = X.n_cols;
  X = CsrMatrix{};
  FillVector<index_t> ridx(rnnz);  // filled by MPI_Alltoallv
  FillVector<float> rval(rnnz), rlo(f64 ? rnnz : 0);
  MPI_Alltoallv(slen.data(), sr.data(), srd.data(), MPI_INT, rlen.data(), rr.data(), rrd.data(), MPI_INT,
                MPI_COMM_WORLD);
  MPI_Alltoallv(sy.data(), sr.data(), srd.data(), MPI_DOUBLE, ry.data(), rr.data(), rrd.data(), MPI_DOUBLE,
                MPI_COMM_WORLD);
  MPI_Alltoallv(sidx.data(), sz.data(), szd.data(), MPI_INT32_T, ridx.data(), rz.data(), rzd.data(), MPI_INT32_T,
                MPI_COMM_WORLD);
  MPI_Alltoallv(sval.data(), sz.data(), szd.data(), MPI_FLOAT, rval.data(), rz.data(), rzd.data(), MPI_FLOAT,
                MPI_COMM_WORLD);
  if (f64)
    MPI_Alltoallv(slo.data(), sz.data(), szd.data(), MPI_FLOAT, rlo.data(), rz.data(), rzd.data(), MPI_FLOAT,
                  MPI_COMM_WORLD);
  bytes_moved = (sidx.size() - static_cast<std::size_t>(sz[c.rank])) * (f64 ? 12 : 8) +
                (sy.size() - static_cast<std::size_t>(sr[c.rank])) * 12;
  X.n_rows = static_cast<index_t>(rrows);
  X.n_cols = n_cols;
  X.offsets.assign(rrows + 1, 0);
  for (std::size_t i = 0; i < rrows; ++i) X.offsets[i + 1] = X.offsets[i] + rlen[i];
  X.indices = std::move(ridx);
  X.values = std::move(rval);
  X.values_lo = std::move(rlo);
  y = std::move(ry);
}

/// The distributed truncated Newton on this rank's rows (solve_primal_newton with SolverOptions::sum_over_ranks =
/// one MPI_Allreduce): the iterations are those of one process on the whole data. Returned as a CocoaResult whose
/// rounds are the Newton iterations; the communication time and volume are counted in the reduction.
template <class Form>
CocoaResult solve_newton_distributed(const Form& form, const CsrMatrix& X, SolverOptions so) {
  CocoaResult out;
  double comm_s = 0;
  std::size_t calls = 0, doubles = 0;
  so.sum_over_ranks = [&](std::span<double> x) {
    const auto t0 = Clock::now();
    MPI_Allreduce(MPI_IN_PLACE, x.data(), static_cast<int>(x.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    comm_s += since(t0);
    ++calls;
    doubles += x.size();
  };
  const auto t0 = Clock::now();
  SolveResult r = solve_primal_newton(form, X, so);
  static_cast<SolveResult&>(out) = std::move(r);
  out.w = out.alpha;
  out.comm_seconds = comm_s;
  out.compute_seconds = since(t0) - comm_s;
  for (const EpochRecord& e : out.history) out.rounds.push_back({e.epoch, e.seconds, 0, 0, 1});
  out.allreduce_doubles_per_round = static_cast<std::size_t>(X.n_cols);  // one X^T D X p per CG step
  out.allreduce_calls = calls;
  out.allreduce_doubles_total = doubles;
  return out;
}

struct RankInfo {
  double rows, coords, nnz, load_s, solve_s, compute_s, comm_s;
};

int run(const Comm& c, const DistributedArgs& a) {
  const auto t_start = Clock::now();
  const TrainOptions& o = a.opt;
  // MODEL - writes the model to standard output: the progress and result lines go to standard error then (as in one
  // process).
  std::FILE* info = a.model_file == "-" ? stderr : stdout;
  int code = 0;
  std::string msg;
  // ---- options that every rank checks identically
  ModelSpec spec;
  Formulation fk = Formulation::dual;
  std::optional<Formulation> fk_given;  // nullopt: newton_or_dual decides once the data is loaded
  std::string fk_reason;
  bool use_newton = false;
  try {
    spec = o.problem.model;
    if (spec.multinomial)  // its Newton-CG solver runs in one process (multinomial.hpp)
      throw InvalidArgument("--distributed: --model multinomial trains in one process only (the CoCoA+ ranks solve "
                            "losses of one margin); drop --distributed");
    fk_given = pick_formulation(o, spec, fk_reason);
    if (fk_given) fk = *fk_given;
    use_newton = fk_given && pick_newton(o, spec, fk);
    if (a.local_epochs < 1) throw InvalidArgument(fmt::format("--local-epochs: must be at least 1, got {}", a.local_epochs));
    check_options(o);
    if (o.device.device != Device::cpu || !o.device.accel_memory.empty())
      throw InvalidArgument("--distributed: the local solver is the CPU SCD (--device/--accel-memory are not supported yet)");
  } catch (const std::exception& e) {
    code = code_of(e);
    msg = e.what();
  }
  if (int g = agree(c, code, msg, true)) return g;

  // ---- threads per rank: --threads, or (0) the node's cores shared among the ranks on the node
  int threads = a.threads;
  if (threads <= 0) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, c.rank, MPI_INFO_NULL, &node);
    int on_node = 1;
    MPI_Comm_size(node, &on_node);
    MPI_Comm_free(&node);
    threads = std::max(1, tbb::info::default_concurrency() / on_node);
  }
  DistributedArgs args = a;
  args.threads = threads;

  // ---- loading: each rank its byte range
  auto tl = Clock::now();
  LocalPart part = load_part(c, args, code, msg);
  const double load_s = since(tl);
  if (int g = agree(c, code, msg)) return g;
  Dataset& data = part.data;
  const int K = c.size;

  // ---- agree on sizes and labels
  std::int64_t n_local = data.X.n_rows, N64 = 0, nnz_local = data.X.nnz(), nnz_global = 0;
  MPI_Allreduce(&n_local, &N64, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&nnz_local, &nnz_global, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  index_t d_local = data.X.n_cols, D0 = 0;
  MPI_Allreduce(&d_local, &D0, 1, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD);
  std::vector<int> row_counts(K);
  const int n_local_i = static_cast<int>(n_local);
  MPI_Allgather(&n_local_i, 1, MPI_INT, row_counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::vector<int> row_displs(K, 0);
  for (int k = 1; k < K; ++k) row_displs[k] = row_displs[k - 1] + row_counts[k - 1];
  const index_t row_off = row_displs[c.rank];
  data.X.n_cols = D0;
  // float64 values (a --tol below kFloat64Tol, docs/formulation.md "float64 data"): every rank keeps values_lo or
  // none does, by the single process's rules over the whole file: none when some rank read a value below
  // kValuesLoMin or when float32 holds every value of the file; otherwise a rank whose values float32 holds keeps
  // zeros. (The distributed Newton decides on its own passes from this, newton.cpp.)
  bool f64 = false;
  if (o.solver.tol < kFloat64Tol) {
    int flags[2] = {part.tiny ? 1 : 0, data.X.has_lo() ? 1 : 0};
    MPI_Allreduce(MPI_IN_PLACE, flags, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    // (a bias that float32 does not hold, -B 0.1, keeps its remainder even when every value of the file is a float32)
    f64 = !flags[0] && (flags[1] || (o.problem.bias >= 0 && values_lo_of(o.problem.bias) != 0.0f));
    if (flags[0] && c.rank == 0) eprint("{}", float32_fallback_warning(a.train_file));
    if (!f64) FillVector<float>().swap(data.X.values_lo);  // (with f64, bias_column below fills a rank without)
  }
  // Union of labels (classifiers): every rank maps them the same way.
  std::vector<double> labels;
  {
    const std::vector<double> mine = distinct_labels(data.y);
    int cnt = static_cast<int>(mine.size());
    std::vector<int> cnts(K), displs(K, 0);
    MPI_Allgather(&cnt, 1, MPI_INT, cnts.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int k = 1; k < K; ++k) displs[k] = displs[k - 1] + cnts[k - 1];
    std::vector<double> all(static_cast<std::size_t>(displs[K - 1] + cnts[K - 1]));
    MPI_Allgatherv(mine.data(), cnt, MPI_DOUBLE, all.data(), cnts.data(), displs.data(), MPI_DOUBLE, MPI_COMM_WORLD);
    labels = distinct_labels(all);
  }
  LinearModel model;
  std::vector<double> positives;
  double lambda = 0;
  try {
    if (N64 == 0) throw InvalidArgument(fmt::format("'{}': no samples to train on", a.train_file));
    if (N64 > std::numeric_limits<index_t>::max()) throw InvalidArgument("more than 2^31-1 samples");
    lambda = resolve_lambda(spec, o.problem.C, o.problem.lambda, N64);
    if (spec.classifier) {
      if (labels.size() < 2)
        throw InvalidArgument(fmt::format("'{}': all samples have the same label {}; a classifier needs two classes",
                                          a.train_file, labels.empty() ? 0.0 : labels[0]));
      positives = set_class_labels(model, labels);
    } else {
      model.nr_class = 2;
      positives = {std::numeric_limits<double>::quiet_NaN()};
    }
  } catch (const std::exception& e) {
    code = code_of(e);
    msg = e.what();
  }
  if (int g = agree(c, code, msg, true)) return g;
  const index_t N = static_cast<index_t>(N64);
  const double eta = l1_share(spec.penalty, o.problem.l1_ratio);
  if (!a.quiet && c.rank == 0) {
    fmt::print(info, "loaded '{}' over {} ranks: {} samples, {} features, {} nonzeros in {:.3f}s (rank 0)\n", a.train_file, K,
               N, D0, nnz_global, load_s);
    std::fflush(info);
  }

  // ---- local problem
  const auto ts = Clock::now();
  CsrMatrix Xb, Xt;
  ProblemData pd;
  std::vector<double> y_raw;  // dual: local labels; primal: all N labels (replicated)
  std::vector<int> coord_counts(K), coord_displs(K, 0);
  std::uint64_t redistribution_bytes = 0;
  try {
    Xb = bias_column(std::move(data.X), o.problem.bias, f64);  // (without a bias: no copy)
    data.X = CsrMatrix{};
  } catch (const std::exception& e) {
    code = code_of(e);
    msg = e.what();
  }
  if (int g = agree(c, code, msg)) return g;
  if (!fk_given) {
    // --formulation auto between dual CoCoA+ and distributed Newton: the single process's rule (newton_or_dual) on
    // the same sampled rows (global indices in file order), their sums added over the ranks.
    const RowNormSample r2 = sample_row_norms(Xb, row_off, N, nullptr);
    double sums[2] = {r2.sum, double(r2.count)};
    MPI_Allreduce(MPI_IN_PLACE, sums, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const FormulationChoice choice = newton_or_dual(spec, N, Xb.n_cols, nnz_global + (o.problem.bias >= 0 ? N : 0),
                                                    sums[1] > 0 ? sums[0] / sums[1] : 0.0, lambda);
    fk = choice.formulation;
    fk_reason = choice.reason;
    use_newton = pick_newton(o, spec, fk);
  }
  // The rank's CoCoA+ local solver: --solver sequential, syscd, or auto (the single process's rule, auto_cd_solver,
  // on the rank's rows: sequential on one thread or for a small hinge part, else SySCD) on `threads` threads.
  const SolverKind local_kind =
      o.solver.solver == SolverKind::automatic ? auto_cd_solver(threads, spec.loss, Xb.nnz()) : o.solver.solver;
  const int local_threads = !use_newton && local_kind == SolverKind::syscd ? threads : 1;
  const int sigma_all = K * local_threads;  // CoCoA+'s sigma' over the K x T blocks
  // The merge across ranks, the one solve_cocoa runs (aggregation.hpp cocoa_merge_plan): the box duals and the
  // logistic dual with adaptive aggregation and the sequential local loop step at sigma' = 1 and merge with gamma
  // searched from 1/K up.
  // (the ranks' mean nonzeros, bias entries included, cap the lookahead's parts: aggregation.hpp lookahead_parts)
  const double nnz_per_rank = (double(nnz_global) + (o.problem.bias >= 0 ? double(N) : 0.0)) / K;
  const MergePlan plan = cocoa_merge_plan(fk == Formulation::dual && is_box_dual(spec.loss),
                                          fk == Formulation::dual && spec.loss == Loss::logistic, K, local_threads,
                                          o.solver.adaptive_aggregation, nnz_per_rank / double(Xb.n_cols));
  if (!a.quiet && c.rank == 0) {
    if (use_newton)
      fmt::print(info, "distributed Newton: primal formulation (samples partitioned), {} thread(s) per rank, lambda {:.6g}\n",
                 threads, lambda);
    else
      fmt::print(info, "distributed CoCoA+: {} formulation ({}), local solver {} per rank, sigma' = {}{}, {} local epoch(s) "
                 "per round, lambda {:.6g}\n",
                 formulation_name(fk), fk == Formulation::dual ? "samples partitioned" : "features partitioned",
                 local_threads > 1 ? fmt::format("syscd on {} threads", local_threads) : std::string("sequential"),
                 local_threads > 1 ? fmt::format("{} ranks x {} threads = {}", K, local_threads, sigma_all)
                 : plan.step_sigma != K ? fmt::format("{} (gamma in [1/{}, {}])", plan.step_sigma, K, plan.hi)
                                        : fmt::format("{}", K),
                 plan.lookahead_chunks > 0
                     ? fmt::format(", lookahead in {} parts of an epoch", plan.lookahead_chunks) : std::string(),
                 a.local_epochs, lambda);
    fmt::print(info, "formulation {}: {}\n", formulation_name(fk), fk_reason);
    std::fflush(info);
  }
  // Coordinate descent's options the run ignores, said as one process says them (bindings/cli main.cpp
  // auto_ignored_cd_options; an explicit --solver newton: parse_options said it already): all of them under the
  // distributed Newton that --solver auto chose, and --no-shrinking where CoCoA+ does not shrink (docs/mpi.md,
  // "Shrinking").
  if (c.rank == 0)
    for (const std::string& name : a.cd_options_given) {
      if (use_newton) {
        if (o.solver.solver == SolverKind::automatic)
          eprint("{}", ignored_option_warning(name, "coordinate descent", "--solver auto trained with the Newton solver"));
      } else if (name == "--no-shrinking" && (fk == Formulation::primal || (K > 1 && !is_box_dual(spec.loss)))) {
        eprint("{}", ignored_option_warning(name, "the shrinking of the dual's local epochs",
                                            fk == Formulation::primal
                                                ? "the distributed primal (CoCoA+ over features) does not shrink"
                                                : "across ranks (K > 1) only the hinge and squared hinge duals shrink"));
      } else if ((name == "--bucket-size" || name == "--nondeterministic") && local_threads == 1) {
        eprint("{}", ignored_option_warning(name,
                                            name == "--bucket-size" ? "the parallel solvers' buckets (syscd)"
                                                                    : "the parallel solvers' work stealing (syscd)",
                                            "the ranks' local solver is the sequential loop"));
      } else if (name == "--aggregation" && K == 1 && local_threads == 1) {
        eprint("{}", ignored_option_warning(name, "the merge of the ranks' (and threads') steps",
                                            "one rank on one thread has nothing to merge"));
      }
    }
  const index_t D = Xb.n_cols;  // features including the bias
  const std::uint64_t part_seed = o.solver.seed;
  std::vector<index_t> w_pos(static_cast<std::size_t>(D));  // where feature j is in the gathered w (primal)
  std::iota(w_pos.begin(), w_pos.end(), index_t{0});
  CsrMatrix Xt_local;  // Newton: the transpose of this rank's rows, unless the rows-only path runs without it
  if (fk == Formulation::dual || use_newton) {
    if (a.random_partition && K > 1)
      redistribute_rows(c, Xb, data.y, row_off, part_seed, f64, redistribution_bytes);
    pd.X = &Xb;
    if (use_newton) {
      if (!newton_rows_only(Xb)) {
        Xt_local = transpose(Xb);
        pd.Xt = &Xt_local;
      }
    } else {
      pd.row_sq_norm = row_sq_norms(Xb);
    }
    y_raw = std::move(data.y);
  } else {
    // Which rank owns feature j: the seeded hash (--partition random), or contiguous blocks balanced by nonzeros
    // (--partition file-order; the bias feature D-1 then belongs to the last non-empty block).
    std::vector<int> col_owner(static_cast<std::size_t>(D), 0);
    if (a.random_partition) {
      for (index_t j = 0; j < D; ++j) col_owner[j] = hashed_owner(part_seed, j, K);
    } else {
      std::vector<std::int64_t> colnnz(static_cast<std::size_t>(D), 0);
      for (offset_t k = 0; k < Xb.nnz(); ++k) ++colnnz[Xb.indices[k]];
      MPI_Allreduce(MPI_IN_PLACE, colnnz.data(), D, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      const std::int64_t total = std::accumulate(colnnz.begin(), colnnz.end(), std::int64_t{0});
      std::int64_t cum = 0;
      int q = 0;
      for (index_t j = 0; j < D; ++j) {
        while (q + 1 < K && cum >= (total * (q + 1)) / K) ++q;
        col_owner[j] = q;
        cum += colnnz[j];
      }
    }
    std::vector<index_t> col_local(static_cast<std::size_t>(D));
    for (index_t j = 0; j < D; ++j) col_local[j] = coord_counts[col_owner[j]]++;
    for (int q = 1; q < K; ++q) coord_displs[q] = coord_displs[q - 1] + coord_counts[q - 1];
    for (index_t j = 0; j < D; ++j) w_pos[j] = coord_displs[col_owner[j]] + col_local[j];
    Xt = redistribute_columns(c, Xb, row_off, N, col_owner, col_local, coord_counts[c.rank], f64,
                              redistribution_bytes);
    Xb = CsrMatrix{};
    pd.Xt = &Xt;
    y_raw.resize(static_cast<std::size_t>(N));
    MPI_Allgatherv(data.y.data(), n_local_i, MPI_DOUBLE, y_raw.data(), row_counts.data(), row_displs.data(),
                   MPI_DOUBLE, MPI_COMM_WORLD);
  }
  const std::vector<double> cw(y_raw.size(), 1.0);

  CocoaOptions co_opt;
  co_opt.local_epochs = a.local_epochs;
  co_opt.local_threads = local_threads;
  co_opt.nnz_per_rank = nnz_per_rank;
  const index_t dim_v = fk == Formulation::dual ? D : N;  // the shared vector: d features (dual), N samples (primal)
  co_opt.shared_lo = static_cast<index_t>((std::int64_t(dim_v) * c.rank) / K);
  co_opt.shared_hi = static_cast<index_t>((std::int64_t(dim_v) * (c.rank + 1)) / K);
  co_opt.coord_counts = coord_counts;
  co_opt.coord_displs = coord_displs;
  if (const char* f = std::getenv("HETGLM_TEST_FAIL_RANK")) co_opt.fail_rank = std::atoi(f);

  const int ncol = static_cast<int>(positives.size());
  model.w.assign(static_cast<std::size_t>(D) * ncol, 0.0);
  std::vector<CocoaResult> cols;
  // Rank 0's round lines (--progress, as one process's epoch lines; "[class c] " where one-vs-rest trains several).
  ProgressLines progress;
  progress.every_seconds = a.progress_seconds;
  progress.every_epochs = a.progress_epochs;
  progress.print = [&](double label, const EpochRecord& r) {
    const std::string prefix = ncol > 1 ? fmt::format("[class {}] ", label) : std::string();
    fmt::print(info, "{}round {:5d}  primal {:.10e}  gap {:.3e}  rel gap {:.3e}  {:8.3f}s\n", prefix, r.epoch, r.primal,
               r.gap, r.rel_gap, r.seconds);
    std::fflush(info);
  };
  try {
    for (int k = 0; k < ncol; ++k) {
      std::vector<double> y(y_raw.size());
      for (std::size_t i = 0; i < y.size(); ++i)
        y[i] = spec.classifier ? (y_raw[i] == positives[k] ? 1.0 : -1.0) : y_raw[i];
      SolverOptions so = o.solver;
      so.n_threads = threads;
      if (!a.quiet && c.rank == 0)
        so.on_epoch = [&, k](const EpochRecord& r) { progress.on_epoch(k, positives[k], r); };
      CocoaResult co = with_form(spec, fk, [&]<class Form>() {
        if constexpr (Form::formulation == Formulation::primal) {
          if (use_newton) {
            if constexpr (Form::PenP::id == Penalty::l2) return solve_newton_distributed(Form(pd, y.data(), cw.data(), lambda, eta, N), Xb, so);
          }
        }
        // The local form reads the float64 values where the ranks agreed on them (f64 above).
        if constexpr (Form::formulation == Formulation::dual) {
          // The local form holds n_r rows; the objective is over all N samples.
          Form f(pd, y.data(), cw.data(), lambda, N);
          read_float64_values(f, so.tol);
          return solve_cocoa(f, so, co_opt);
        } else {
          Form f(pd, y.data(), cw.data(), lambda, eta);
          read_float64_values(f, so.tol);
          return solve_cocoa(f, so, co_opt);
        }
      });
      if (c.rank == 0)
        for (index_t j = 0; j < D; ++j) model.w[static_cast<std::size_t>(j) * ncol + k] = co.w[w_pos[j]];
      model.primal.push_back(co.certificate.primal);
      model.dual.push_back(co.certificate.dual);
      model.gap.push_back(co.certificate.gap);
      cols.push_back(std::move(co));
      progress.flush();  // the column's last round
    }
  } catch (const RemoteFailure& f) {
    return f.code;
  } catch (const std::exception& e) {
    // Raised identically on every rank (non-finite global objective).
    if (c.rank == 0) eprint("error: {}; no model written\n", e.what());
    return code_of(e);
  }
  const double solve_s = since(ts);

  // ---- per-rank report
  double compute_s = 0, comm_s = 0;
  for (const auto& co : cols) compute_s += co.compute_seconds, comm_s += co.comm_seconds;
  // Rows partitioned (the dual, Newton: the redistributed rows, whose weights Newton holds whole on every rank) or
  // columns (the primal CoCoA+: its coordinates, the rank's rows as read).
  const bool by_rows = fk == Formulation::dual || use_newton;
  const double rows_held = by_rows ? Xb.n_rows : n_local;
  RankInfo mine{rows_held, double(fk == Formulation::dual ? rows_held : use_newton ? D : coord_counts[c.rank]),
                double(by_rows ? Xb.nnz() : Xt.nnz()), load_s, solve_s, compute_s, comm_s};
  std::vector<RankInfo> infos(K);
  MPI_Gather(&mine, 7, MPI_DOUBLE, infos.data(), 7, MPI_DOUBLE, 0, MPI_COMM_WORLD);

  int out_code = 0;
  if (c.rank == 0) {
    model.solver_type = solver_type_name(spec, fk);
    model.nr_feature = D0;
    model.bias = o.problem.bias;
    model.model = spec.name;
    model.penalty = penalty_name(spec.penalty);
    model.lambda = lambda;
    model.l1_ratio = eta;
    model.n_samples = N64;
    model.formulation = formulation_name(fk);
    double P = 0, Dv = 0, G = 0;
    int rounds = 0;
    bool converged = true;
    // Why a column stopped before the tolerance, in one process's words (run_train): the stall rule's stop
    // (epoch_driver.hpp: no measurable progress any more) or the round limit.
    std::vector<std::string> not_converged;
    for (std::size_t k = 0; k < cols.size(); ++k) {
      const auto& co = cols[k];
      P += co.certificate.primal, Dv += co.certificate.dual, G += co.certificate.gap;
      rounds = std::max(rounds, co.epochs);
      converged = converged && co.converged;
      if (co.converged) continue;
      const std::string who = spec.classifier && cols.size() > 1 ? fmt::format(" (class {})", positives[k]) : "";
      not_converged.push_back(
          !co.stalled.empty()
              ? stall_warning(co.epochs, "rounds", who, co.stalled)
              : fmt::format("warning: not converged (round limit --max-epochs {}){}: relative gap {:.3e} > tol {:.1e}; "
                            "the model and its certificate are written\n",
                            o.solver.max_epochs, who, relative_gap(co.certificate), o.solver.tol));
    }
    const bool stalled = std::any_of(cols.begin(), cols.end(), [](const auto& co) { return !co.stalled.empty(); });
    const double train_s = since(t_start);
    // Bytes per round: each rank contributes dim_v + 7 doubles (+ the trial steps' objectives with adaptive
    // aggregation) to the allreduces; a ring allreduce sends 2 (K-1)/K of that per rank, so K of them move
    // 2 (K-1) x payload bytes in all.
    const double payload = double(cols.empty() ? std::size_t(dim_v) + 7 : cols[0].allreduce_doubles_per_round) * 8;
    const double wire = 2.0 * (K - 1) * payload;
    if (!a.quiet) {
      for (int r = 0; r < K; ++r)
        fmt::print(info, "rank {}: {} rows, {} coordinates, {} nonzeros, load {:.3f}s, solve {:.3f}s (compute {:.3f}s, "
                   "communication {:.3f}s)\n",
                   r, infos[r].rows, infos[r].coords, infos[r].nnz, infos[r].load_s, infos[r].solve_s,
                   infos[r].compute_s, infos[r].comm_s);
      const std::string work = use_newton ? fmt::format("{} Newton iterations on {} ranks, {:.0f} bytes allreduced "
                                                        "per rank per CG step", rounds, K, payload)
                                          : fmt::format("{} rounds x {} local epochs on {} ranks, {:.0f} bytes "
                                                        "allreduced per rank per round", rounds, a.local_epochs, K,
                                                        payload);
      fmt::print(info, "{}: {} ({}), lambda {:.6g}: primal {:.10e}  dual {:.10e}  gap {:.3e}  rel gap {:.3e}  {}, train "
                 "{:.3f}s\n",
                 converged ? "converged"
                 : stalled ? "warning: not converged (stalled)"
                           : "warning: not converged (round limit)",
                 spec.name, formulation_name(fk), lambda, P, Dv, G, P != 0 ? G / std::fabs(P) : G, work, train_s);
      std::fflush(info);
    }
    try {
      // The report replaces the previous one only once the model is written (StagedFile, io.hpp; issue 18).
      std::optional<StagedFile> staged_report;
      if (!a.report_file.empty()) {
        json rep;
        rep["version"] = HETGLM_VERSION;
        rep["distributed"] = true;
        rep["ranks"] = K;
        rep["sigma"] = use_newton ? json(nullptr) : json(plan.step_sigma);  // (Newton's sums are exact: no sigma')
        rep["gamma"] = o.solver.adaptive_aggregation && plan.searches() && !use_newton ? json("adaptive") : json(1);
        rep["local_epochs"] = a.local_epochs;
        rep["lookahead_chunks"] = use_newton ? 0 : plan.lookahead_chunks;
        rep["solver"] = use_newton ? "newton" : "cocoa+";
        rep["local_solver"] = use_newton ? "newton" : local_threads > 1 ? "syscd" : "sequential";
        rep["threads"] = threads;  // per rank
        rep["formulation_reason"] = fk_reason;
        if (use_newton) {
          std::size_t calls = 0, total = 0;
          for (const auto& co : cols) calls += co.allreduce_calls, total += co.allreduce_doubles_total;
          rep["allreduce_calls"] = calls;
          rep["allreduce_bytes_total"] = total * 8;
        }
        rep["partition"] = a.random_partition ? "random" : "file-order";
        rep["train_parts"] = part.parts;  // 0: one plain file read by byte ranges
        rep["train_file"] = a.train_file;
        rep["model_file"] = a.model_file;
        rep["model"] = spec.name;
        rep["penalty"] = model.penalty;
        rep["formulation"] = formulation_name(fk);
        rep["lambda"] = lambda;
        rep["l1_ratio"] = eta;
        rep["tol"] = o.solver.tol;
        rep["max_rounds"] = o.solver.max_epochs;
        rep["seed"] = o.solver.seed;
        rep["bias"] = o.problem.bias;
        rep["n_samples"] = N;
        rep["n_features"] = D0;
        rep["nnz"] = nnz_global;
        rep["primal"] = P;
        rep["dual"] = Dv;
        rep["gap"] = G;
        rep["rel_gap"] = P != 0 ? G / std::fabs(P) : G;
        rep["rounds"] = rounds;
        rep["converged"] = converged;
        rep["train_seconds"] = train_s;
        rep["shared_vector_length"] = dim_v;
        rep["allreduce_bytes_per_rank_per_round"] = payload;
        rep["comm_bytes_per_round"] = wire;
        rep["redistribution_bytes_rank0"] = redistribution_bytes;
        json ranks = json::array();
        for (int r = 0; r < K; ++r)
          ranks.push_back({{"rank", r}, {"rows", infos[r].rows}, {"coordinates", infos[r].coords},
                           {"nnz", infos[r].nnz}, {"load_seconds", infos[r].load_s},
                           {"solve_seconds", infos[r].solve_s}, {"compute_seconds", infos[r].compute_s},
                           {"comm_seconds", infos[r].comm_s}});
        rep["rank_times"] = std::move(ranks);
        json jc = json::array();
        for (int k = 0; k < ncol; ++k) {
          const auto& co = cols[k];
          json h = json::array();
          for (std::size_t q = 0; q < co.history.size(); ++q) {
            const EpochRecord& r = co.history[q];
            // history holds the certified rounds only (--certificate-every, the primal's schedule), rounds every
            // round, both in order: the round of the same number
            const auto it = std::lower_bound(co.rounds.begin(), co.rounds.end(), r.epoch,
                                             [](const CocoaRound& c, int e) { return c.round < e; });
            const CocoaRound t = it != co.rounds.end() && it->round == r.epoch ? *it : CocoaRound{r.epoch};
            h.push_back({{"round", r.epoch}, {"seconds", r.seconds}, {"compute_seconds", t.compute_seconds},
                         {"comm_seconds", t.comm_seconds}, {"gamma", t.gamma}, {"beta", t.beta}, {"active", t.active},
                         {"comm_bytes", wire}, {"primal", r.primal},
                         {"dual", r.dual}, {"gap", r.gap}, {"rel_gap", r.rel_gap}});
          }
          json col = {{"primal", co.certificate.primal}, {"dual", co.certificate.dual}, {"gap", co.certificate.gap},
                      {"rounds", co.epochs}, {"converged", co.converged}, {"seconds", co.seconds},
                      {"history", std::move(h)}};
          if (spec.classifier) col["label"] = positives[k];
          if (!co.stalled.empty()) col["stalled"] = co.stalled;
          jc.push_back(std::move(col));
        }
        rep["columns"] = std::move(jc);
        staged_report = StagedFile::stage(a.report_file, rep.dump(2, ' ', false, json::error_handler_t::replace) + "\n");
      }
      model.zero_based = a.zero_based;  // predict reads its data as the training file was read
      bool model_written = false;
      try {
        write_model_to(a.model_file, model);  // MODEL - (or /dev/stdout, the CLI says "-"): standard output
        model_written = true;
        if (staged_report) staged_report->commit();
      } catch (const std::exception& e) {  // as one process says it: the report goes with the model
        eprint("error: {}{}\n", e.what(),
               model_written ? fmt::format(" (the model {} is written)",
                                           a.model_file == "-" ? std::string("to standard output")
                                                               : "'" + a.model_file + "'")
               : a.report_file.empty() ? std::string()
                                       : fmt::format("; the report '{}' is not replaced either", a.report_file));
        out_code = kExitTraining;
      }
      // "... the model and its certificate are written": said once they are (-q keeps warnings, as in one process).
      if (model_written)
        for (const std::string& w : not_converged) eprint("{}", w);
    } catch (const std::exception& e) {
      eprint("error: {}\n", e.what());
      out_code = kExitTraining;
    }
  }
  MPI_Bcast(&out_code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return out_code;
}

}  // namespace

int train_distributed_main(const DistributedArgs& args) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  }
  Comm c;
  MPI_Comm_rank(MPI_COMM_WORLD, &c.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &c.size);
  int code = kExitTraining;
  try {
    code = run(c, args);
  } catch (const std::exception& e) {
    // Not collective: cannot tell the others, so abort the job rather than hang.
    eprint("error: [rank {} of {}] {}\n", c.rank, c.size, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code_of(e));
  }
  MPI_Finalize();
  return code;
}

}  // namespace hetglm
