// SPDX-License-Identifier: Apache-2.0
// LIBLINEAR's command-line vocabulary in hetglm's terms (README, "The command line"; docs/liblinear-cli.md): the
// solver types of `-s`, the class weights `-wi weight` (which CLI11 cannot parse: they are taken out of argv
// first), and the hints for options that hetglm does not have or spells differently.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hetglm::cli {

/// A LIBLINEAR solver type that exists here: the hetglm model, penalty and formulation it means.
struct LiblinearType {
  int type;
  const char* name;         ///< LIBLINEAR's solver_type name (L2R_LR, ...)
  const char* model;        ///< --model
  const char* penalty;      ///< --penalty
  const char* formulation;  ///< --formulation
  bool svr;                 ///< -s 11 / -s 12: needs -p 0; LIBLINEAR's C is half of hetglm's -c
};

/// `-s TEXT` -> the type, or InvalidArgument saying why not: not a number, a type whose problem hetglm does not
/// train (4 Crammer-Singer, 13 L1-loss SVR, 21 one-class SVM), or an unknown type.
const LiblinearType& liblinear_type(const std::string& text);

/// The types that exist here, for messages: "0, 1, 2, 3, 5, 6, 7, 11 and 12".
std::string liblinear_type_list();

/// One `-wLABEL WEIGHT` of LIBLINEAR: sample weight c_i = WEIGHT for the samples of class LABEL.
struct ClassWeight {
  std::string flag;  ///< as written, e.g. "-w1" (for messages)
  double label = 0;
  double weight = 1;
};

/// Removes every `-wLABEL WEIGHT` pair after the `train` subcommand from `args` (args[0] is the program) and returns
/// them; InvalidArgument for `-w` without a label, a label that is not a number, a missing or non-positive weight,
/// or a label given twice.
std::vector<ClassWeight> extract_class_weights(std::vector<std::string>& args);

/// A second line for an option that `hetglm train` (train = true) or `hetglm predict` does not know: LIBLINEAR's or
/// LIBSVM's options that have no counterpart say so, hetglm's options written with the wrong number of dashes or a
/// small typo get their spelling here. Empty when there is nothing useful to say. `known` lists the subcommand's
/// option names ("-c", "--tol", ...).
std::string unknown_option_hint(const std::string& token, bool train, const std::vector<std::string>& known);

/// Parses a number for a LIBLINEAR flag ("-e", "-p"): InvalidArgument "FLAG: expected a number, got 'x'".
double parse_number(const std::string& flag, const std::string& text);
/// Parses an integer for a LIBLINEAR flag ("-v", "-n", "-b").
int parse_int(const std::string& flag, const std::string& text);

}  // namespace hetglm::cli
