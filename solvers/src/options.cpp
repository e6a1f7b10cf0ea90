// SPDX-License-Identifier: Apache-2.0
// Solver names (options.hpp).
#include "hetglm/solvers/options.hpp"

#include <fmt/format.h>

#include "hetglm/error.hpp"

namespace hetglm {

SolverKind parse_solver_kind(std::string_view name) {
  if (name == "sequential") return SolverKind::sequential;
  if (name == "syscd") return SolverKind::syscd;
  if (name == "passcode-atomic") return SolverKind::passcode_atomic;
  if (name == "passcode-wild") return SolverKind::passcode_wild;
  if (name == "newton") return SolverKind::newton;
  if (name == "working-set") return SolverKind::working_set;
  if (name == "auto") return SolverKind::automatic;
  throw InvalidArgument(fmt::format(
      "--solver: unknown solver '{}' (expected auto, newton, working-set, sequential, syscd, passcode-atomic or "
      "passcode-wild)",
      name));
}

std::string_view solver_kind_name(SolverKind kind) {
  switch (kind) {
    case SolverKind::sequential: return "sequential";
    case SolverKind::syscd: return "syscd";
    case SolverKind::passcode_atomic: return "passcode-atomic";
    case SolverKind::passcode_wild: return "passcode-wild";
    case SolverKind::newton: return "newton";
    case SolverKind::automatic: return "auto";
    case SolverKind::working_set: return "working-set";
  }
  return "unknown";
}

}  // namespace hetglm
