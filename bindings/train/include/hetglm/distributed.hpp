// SPDX-License-Identifier: Apache-2.0
// The distributed trainer's program: `mpirun -np K hetglm train --distributed ...` (docs/mpi.md; the solver is
// solvers/include/hetglm/solvers/cocoa.hpp, CoCoA+, docs/algorithms.md, "CoCoA+: adding local updates"). Compiled only with
// -DHETGLM_ENABLE_MPI=ON (then HETGLM_ENABLE_MPI is defined for every target linking hetglm_solvers); this header
// itself needs no MPI.
//
//   * Loading: rank r reads only bytes [b_r, b_{r+1}) of the libsvm file, b_r = r*size/K moved forward to the next
//     line start; parse errors name the GLOBAL line (newlines before b_r are counted with MPI_Exscan). Row counts,
//     the number of features (max over ranks) and the labels (union, MPI_Allgatherv) are agreed over MPI.
//   * Dual models (L2 penalty: logistic, svm, squared-hinge, ridge): partitioned by samples; with --partition random
//     (the default) each row goes to the rank given by a seeded hash of its global index (MPI_Alltoallv), so every
//     rank holds a random part whatever the order of the file. Primal models (lasso, elastic-net, --formulation
//     primal): the nonzeros are redistributed by feature with MPI_Alltoallv, feature j to the hash's rank (random)
//     or to contiguous blocks balanced by nonzeros (file-order); the labels are replicated.
//   * Each round (solve_cocoa): H = --local-epochs epochs of sequential SCD on the rank's coordinates against a local
//     copy of v with sigma' = K (with --threads T > 1: SySCD's epochs on T threads, sigma' = K T); one MPI_Allreduce (sum) of the change of v (length d dual, n primal); with
//     --aggregation adaptive (the default) the step gamma and a momentum beta by a search over a fixed grid whose
//     partial objectives are summed by one small allreduce; the global certificate from one MPI_Allreduce of the local sums
//     (plus an error flag); stop on the relative gap.
//   * A failing rank prints its own message; every rank leaves with the same non-zero code (2 bad input, 1 other);
//     rank 0 writes the model (and the report) atomically only when every rank succeeded.
#pragma once
#include <cstdint>
#include <string>

#include "hetglm/train.hpp"

namespace hetglm {

struct DistributedArgs {
  std::string train_file, model_file, report_file;
  TrainOptions opt;              ///< model, penalty, C / lambda, tol, max_epochs (= max rounds), seed, bias, formulation
  bool zero_based = false;
  std::int64_t n_features = -1;  ///< >= 0: --n-features
  int threads = 0;               ///< threads per rank: parser, Newton, CoCoA+'s local solver (0 = the node's cores
                                 ///< shared among its ranks)
  int local_epochs = 1;          ///< H: local epochs per communication round
  bool quiet = false;
  bool random_partition = true;  ///< --partition random: rows (dual) / columns (primal) to ranks by a seeded hash
  /// Coordinate descent's options given ("--no-shrinking", "--certificate-every", ...): rank 0 says which the run
  /// ignored (distributed Newton chosen by --solver auto; --no-shrinking where nothing shrinks).
  std::vector<std::string> cd_options_given;
  double progress_seconds = 1;  ///< --progress Ts: a round line every T seconds (0: by rounds)
  int progress_epochs = 1;      ///< --progress N: a round line every N rounds
};

/// Runs the whole distributed `train` on this rank (MPI_Init .. MPI_Finalize inside) and returns the process exit
/// code, the same on every rank: 0 success, 1 training or output failure, 2 bad input or options.
int train_distributed_main(const DistributedArgs& args);

}  // namespace hetglm
