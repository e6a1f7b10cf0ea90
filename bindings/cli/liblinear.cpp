// SPDX-License-Identifier: Apache-2.0
// LIBLINEAR's flags in hetglm's terms (liblinear.hpp).
#include "liblinear.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <iterator>

#include "hetglm/error.hpp"

namespace hetglm::cli {

namespace {

// LIBLINEAR 2.3's solver types (its README, "-s type") whose problem hetglm trains. The objectives, in LIBLINEAR's
// scaling, and their hetglm form P(w) = (1/n) sum loss + lambda R(w) with lambda = 1/(C n) (SVR: 1/(2 C n)) are in
// docs/liblinear-cli.md, "LIBLINEAR's solver types".
constexpr LiblinearType kTypes[] = {
    {0, "L2R_LR", "logistic", "l2", "primal", false},
    {1, "L2R_L2LOSS_SVC_DUAL", "squared-hinge", "l2", "dual", false},
    {2, "L2R_L2LOSS_SVC", "squared-hinge", "l2", "primal", false},
    {3, "L2R_L1LOSS_SVC_DUAL", "svm", "l2", "dual", false},
    {5, "L1R_L2LOSS_SVC", "squared-hinge", "l1", "primal", false},
    {6, "L1R_LR", "logistic", "l1", "primal", false},
    {7, "L2R_LR_DUAL", "logistic", "l2", "dual", false},
    {11, "L2R_L2LOSS_SVR", "ridge", "l2", "primal", true},
    {12, "L2R_L2LOSS_SVR_DUAL", "ridge", "l2", "dual", true},
};

bool parse_double(const std::string& text, double& v) {
  if (text.empty()) return false;
  char* end = nullptr;
  v = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(v);
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> d(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t prev = d[0];
    d[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cur = d[j];
      d[j] = std::min({d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] == b[j - 1] ? 0 : 1)});
      prev = cur;
    }
  }
  return d[b.size()];
}

}  // namespace

std::string liblinear_type_list() {
  std::string s;
  const std::size_t n = std::size(kTypes);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 == n ? " and " : ", ";
    s += std::to_string(kTypes[i].type);
  }
  return s;
}

const LiblinearType& liblinear_type(const std::string& text) {
  int t = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), t);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw InvalidArgument(fmt::format("-s: expected a LIBLINEAR solver type ({}), got {}", liblinear_type_list(),
                                      quote_token(text)));
  for (const LiblinearType& k : kTypes)
    if (k.type == t) return k;
  switch (t) {
    case 4:
      throw InvalidArgument(
          "-s 4: Crammer and Singer's multi-class SVM (MCSVM_CS) is not available in hetglm; multi-class data train "
          "one-vs-rest with every other type (e.g. -s 1, 2 or 3 for an SVM)");
    case 13:
      throw InvalidArgument(
          "-s 13: L2-regularized L1-loss support vector regression (L2R_L1LOSS_SVR_DUAL) is not available in hetglm; "
          "-s 11 or -s 12 with -p 0 train ridge regression");
    case 21:
      throw InvalidArgument("-s 21: the one-class SVM (ONECLASS_SVM) is not available in hetglm");
    default:
      throw InvalidArgument(fmt::format("-s {}: not a LIBLINEAR solver type; hetglm trains types {}", t,
                                        liblinear_type_list()));
  }
}

double parse_number(const std::string& flag, const std::string& text) {
  double v = 0;
  if (!parse_double(text, v))
    throw InvalidArgument(fmt::format("{}: expected a number, got {}", flag, quote_token(text)));
  return v;
}

int parse_int(const std::string& flag, const std::string& text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw InvalidArgument(fmt::format("{}: expected an integer, got {}", flag, quote_token(text)));
  return v;
}

std::vector<ClassWeight> extract_class_weights(std::vector<std::string>& args) {
  std::vector<ClassWeight> out;
  std::vector<std::string> kept;
  bool in_train = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i > 0 && !in_train && (a == "train" || a == "predict")) {
      in_train = a == "train";
      kept.push_back(a);
      if (!in_train) {  // predict: nothing to take out
        kept.insert(kept.end(), args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
        break;
      }
      continue;
    }
    if (!in_train || a.size() < 2 || a[0] != '-' || a[1] != 'w') {
      kept.push_back(a);
      continue;
    }
    if (a == "-w")
      throw InvalidArgument("-w: give the class label right after -w and then its weight, as in -w1 2 or -w-1 0.5 "
                            "(LIBLINEAR's -wi weight)");
    ClassWeight cw;
    cw.flag = a;
    if (!parse_double(a.substr(2), cw.label))
      throw InvalidArgument(fmt::format("{}: expected a class label after -w (as in -w1 2), got {}", quote_token(a),
                                        quote_token(a.substr(2))));
    if (i + 1 >= args.size())
      throw InvalidArgument(fmt::format("{}: expected a weight after {} (LIBLINEAR's -wi weight)", a, a));
    const std::string& wt = args[++i];
    if (!parse_double(wt, cw.weight) || !(cw.weight > 0))
      throw InvalidArgument(fmt::format("{}: the weight must be a positive number, got {}", a, quote_token(wt)));
    for (const ClassWeight& o : out)
      if (o.label == cw.label)
        throw InvalidArgument(fmt::format("{}: class {} already has a weight ({} {})", a, cw.label, o.flag, o.weight));
    out.push_back(cw);
  }
  args = std::move(kept);
  return out;
}

std::string unknown_option_hint(const std::string& token, bool train, const std::vector<std::string>& known) {
  const std::string name = token.substr(0, token.find('='));
  if (train) {
    if (name == "-b")
      return "hint: -b is predict's option here: train a logistic model (-s 0, 6 or 7) and run `hetglm predict -b 1 "
             "MODEL DATA`";
    if (name == "-R")
      return "hint: LIBLINEAR's -R (bias not regularized) is not available: the -B feature is regularized like every "
             "weight (LIBLINEAR's default)";
    if (name == "-W")
      return "hint: instance weights from a file are not available on the command line; class weights are -wi "
             "weight (as -w1 2), sample weights are Python's sample_weight";
    if (name == "-t" || name == "-g" || name == "-d" || name == "-r" || name == "-m")
      return fmt::format("hint: {} is a LIBSVM kernel option: hetglm trains linear models only", name);
    if (name == "-M" || name == "-i")
      return fmt::format("hint: {} is not a LIBLINEAR 2.3 option; hetglm's options: hetglm train --help", name);
  } else {
    if (name == "-B" || name == "-c" || name == "-s" || name == "-e" || name == "-v" || name == "-C")
      return fmt::format("hint: {} is an option of `hetglm train`; predict reads everything it needs from MODEL", name);
  }
  // hetglm's own options with one dash too few or too many, or a small typo.
  const std::string bare = name.substr(name.find_first_not_of('-') == std::string::npos ? name.size()
                                                                                          : name.find_first_not_of('-'));
  for (const std::string& k : known) {
    const std::string kb = k.substr(k.find_first_not_of('-'));
    if (kb == bare && k != name) return fmt::format("hint: did you mean {}?", k);
  }
  std::string best;
  std::size_t best_d = 3;
  for (const std::string& k : known) {
    if (k.size() <= 2 || bare.size() <= 2) continue;  // short options: no typo guessing
    const std::size_t d = edit_distance(bare, k.substr(k.find_first_not_of('-')));
    if (d < best_d) best_d = d, best = k;
  }
  if (!best.empty()) return fmt::format("hint: did you mean {}?", best);
  return {};
}

}  // namespace hetglm::cli
