// SPDX-License-Identifier: Apache-2.0
// Options and results shared by the solvers.
#pragma once
#include <cstdint>
#include <functional>
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
};

struct SolverOptions {
  double tol = 1e-4;                 ///< stop when P - D <= tol |P| (conventions.md)
  int max_epochs = 1000;             ///< reaching it is a warning, not a failure
  std::uint64_t seed = 1;            ///< coordinate order
  std::function<void(const EpochRecord&)> on_epoch;  ///< progress callback (may be empty)
  /// Polled once per epoch; returning true stops the solve after the current epoch (Ctrl-C).
  std::function<bool()> should_stop;
};

struct SolveResult {
  Certificate certificate;           ///< final, from v recomputed as A alpha
  int epochs = 0;
  bool converged = false;            ///< gap <= tol |P| reached
  bool interrupted = false;          ///< should_stop() asked to stop
  double seconds = 0;
  std::vector<EpochRecord> history;
  std::vector<double> alpha;         ///< coordinate variables (dual: per sample; primal: w)
  std::vector<double> w;             ///< primal weights
};

}  // namespace hetglm
