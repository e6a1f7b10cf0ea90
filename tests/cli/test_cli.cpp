// SPDX-License-Identifier: Apache-2.0
// The `hetglm` command line end to end: exit codes, exact error text, no model file after bad input,
// certificates in the model file and the JSON report, predictions.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "hetglm/libsvm.hpp"
#include "hetglm/model.hpp"

namespace fs = std::filesystem;

namespace {

struct CliRun {
  int code;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class Cli : public ::testing::Test {
 protected:
  fs::path dir;
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("hetglm_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  CliRun run(const std::string& args) {
    const std::string out = (dir / "stdout").string(), err = (dir / "stderr").string();
    const std::string cmd = "cd '" + dir.string() + "' && '" + HETGLM_CLI + "' " + args + " >'" + out + "' 2>'" + err + "'";
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
  }
  std::string data(const std::string& name) { return std::string(HETGLM_DATA_DIR) + "/" + name; }
  fs::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return dir / name;
  }
};

}  // namespace

TEST_F(Cli, TrainsLogisticOnA9aWithCertificateReportAndTestAccuracy) {
  const CliRun r = run("train -c 1 --tol 1e-6 --test " + data("a9a.t") + " --report-json rep.json " + data("a9a") + " a9a.model");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("epoch     1  primal"), std::string::npos);  // one progress line per epoch
  EXPECT_EQ(r.err, "");
  const auto rep = nlohmann::json::parse(slurp(dir / "rep.json"));
  const hetglm::LinearModel m = hetglm::load_model((dir / "a9a.model").string());
  // The defaults (--formulation auto, --solver auto) train a9a in the primal with the Newton solver.
  EXPECT_EQ(m.solver_type, "L2R_LR");
  EXPECT_EQ(m.formulation, "primal");
  EXPECT_EQ(rep["solver"].get<std::string>(), "newton");
  EXPECT_NE(rep["formulation_reason"].get<std::string>().find("chose primal"), std::string::npos);
  EXPECT_NE(r.out.find("formulation primal (solver newton): auto: 32561 x 123"), std::string::npos) << r.out;
  EXPECT_EQ(m.labels, (std::vector<double>{1, -1}));
  EXPECT_EQ(m.nr_feature, 123);
  EXPECT_DOUBLE_EQ(m.lambda, 1.0 / 32561);
  // The report and the model file carry the same certificate, at or below the tolerance.
  EXPECT_DOUBLE_EQ(rep["primal"].get<double>(), m.primal.at(0));
  EXPECT_DOUBLE_EQ(rep["dual"].get<double>(), m.dual.at(0));
  EXPECT_DOUBLE_EQ(rep["gap"].get<double>(), m.gap.at(0));
  EXPECT_NEAR(m.gap[0], m.primal[0] - m.dual[0], 1e-15);
  EXPECT_LE(m.gap[0], 1e-6 * m.primal[0]);
  EXPECT_TRUE(rep["converged"].get<bool>());
  EXPECT_EQ(rep["columns"][0]["history"].size(), rep["epochs"].get<std::size_t>());
  EXPECT_GE(rep["test"]["accuracy"].get<double>(), 0.849);
  EXPECT_EQ(rep["n_samples"].get<int>(), 32561);
}

TEST_F(Cli, PredictWritesLabelsAndAccuracyAndProbabilities) {
  ASSERT_EQ(run("train -q " + data("a9a") + " m").code, 0);
  const CliRun p = run("predict m " + data("a9a.t") + " out.txt");
  ASSERT_EQ(p.code, 0) << p.err;
  EXPECT_EQ(p.out.rfind("Accuracy = ", 0), 0u);
  EXPECT_NE(p.out.find("/16281)"), std::string::npos);
  const std::string out = slurp(dir / "out.txt");
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 16281);
  EXPECT_EQ(out.substr(0, 6), "-1\n-1\n");
  const CliRun pr = run("predict --probability -q m " + data("a9a.t") + " proba.txt");
  ASSERT_EQ(pr.code, 0) << pr.err;
  EXPECT_EQ(pr.out, "");
  const std::string proba = slurp(dir / "proba.txt");
  EXPECT_EQ(proba.substr(0, 12), "labels 1 -1\n");
  double label, p1, p2;
  std::istringstream line(proba.substr(12, proba.find('\n', 12) - 12));
  line >> label >> p1 >> p2;
  EXPECT_NEAR(p1 + p2, 1.0, 1e-12);
  EXPECT_EQ(label, p1 > 0.5 ? 1 : -1);
}

TEST_F(Cli, EveryModelTrainsFromTheCommandLine) {
  for (const std::string args : {"--model svm", "--model squared-hinge", "--model logistic", "--model ridge",
                                 "--model lasso --lambda 0.1", "--model elastic-net --lambda 0.1 --l1-ratio 0.3"}) {
    const bool reg = args.find("ridge") != std::string::npos || args.find("lasso") != std::string::npos ||
                     args.find("elastic") != std::string::npos;
    const CliRun r = run("train -q --max-epochs 5000 " + args + " " + data(reg ? "housing_scale" : "heart_scale") + " m");
    SCOPED_TRACE(args);
    ASSERT_EQ(r.code, 0) << r.err;
    const hetglm::LinearModel m = hetglm::load_model((dir / "m").string());
    EXPECT_LE(m.gap.at(0), 1e-4 * m.primal.at(0));
    const CliRun p = run("predict m " + data(reg ? "housing_scale" : "heart_scale") + " o");
    EXPECT_EQ(p.code, 0);
    EXPECT_EQ(p.out.substr(0, reg ? 7 : 11), reg ? "RMSE = " : "Accuracy = ");
  }
}

TEST_F(Cli, MulticlassTrainsOneVsRestLikeLiblinear) {
  const CliRun r = run("train -B 1 " + data("dna.scale") + " dna.model");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("[class 2] epoch"), std::string::npos);
  const std::string model = slurp(dir / "dna.model");
  EXPECT_NE(model.find("nr_class 3\nlabel 1 2 3\nnr_feature 180\nbias 1\n"), std::string::npos);
  const CliRun p = run("predict dna.model " + data("dna.scale.t") + " out");
  ASSERT_EQ(p.code, 0);
  EXPECT_EQ(p.out.rfind("Accuracy = 9", 0), 0u) << p.out;  // above 90%
}

TEST_F(Cli, EpochLimitWarnsButWritesTheModel) {
  const CliRun r = run("train -q --model svm --max-epochs 2 --tol 1e-12 " + data("heart_scale") + " m");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.err.rfind("warning: reached --max-epochs 2 before the tolerance: relative gap ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("the model and its certificate are written"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "m"));
}

TEST_F(Cli, QuietPrintsNothingAndDefaultModelNameFollowsLiblinear) {
  const CliRun r = run("train -q " + data("heart_scale"));
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(fs::exists(dir / "heart_scale.model"));
}

TEST_F(Cli, VersionNamesTheBackends) {
  const CliRun r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("hetglm 0.1.0 (backends: cpu", 0), 0u) << r.out;
}

TEST_F(Cli, BadInputExitsTwoWithAClearMessageAndWritesNothing) {
  write("bad.svm", "+1 1:0.5 2:1\n-1 3:abc\n");
  write("dup.svm", "+1 1:0.5\n-1 2:1 2:3\n");
  write("ok.svm", "+1 1:0.5\n-1 2:1\n");
  struct Case {
    std::string args, err;
  };
  const std::vector<Case> cases = {
      {"train missing.svm m", "error: cannot open 'missing.svm': No such file or directory\n"},
      {"train /dev/zero m", "error: cannot open '/dev/zero': not a regular file or pipe\n"},
      {"train . m", "error: cannot open '.': Is a directory\n"},
      {"train bad.svm m", "error: bad.svm:2:6: "},
      {"train dup.svm m", "error: dup.svm:2:8: "},
      {"train -c 1 --lambda 2 ok.svm m", "error: -c and --lambda are mutually exclusive: give one of them\n"},
      {"train --model svn ok.svm m",
       "error: --model: unknown model 'svn' (expected logistic, svm, squared-hinge, ridge, lasso, elastic-net or huber)\n"},
      {"train --model svm --formulation primal ok.svm m",
       "error: --formulation primal: the hinge loss is not smooth, so svm trains in the dual only\n"},
      {"train --tol -1 ok.svm m", "error: --tol: must be a positive number, got -1\n"},
      // Checked before the data is read (the training file does not exist).
      {"train --formulation both missing.svm m",
       "error: --formulation: unknown value 'both' (expected auto, dual or primal)\n"},
      {"train --solver hogwild missing.svm m",
       "error: --solver: unknown solver 'hogwild' (expected auto, newton, working-set, sequential, syscd, "
       "passcode-atomic or passcode-wild)\n"},
      {"train --penalty l1 --formulation dual ok.svm m",
       "error: --formulation dual: penalty l1 of model 'logistic' has no dual (SDCA) form; use primal\n"},
      {"train --distributed --solver newton ok.svm m",
       "error: --solver newton: --distributed trains with the sequential local solver on every rank (CoCoA+); drop "
       "--solver\n"},
      {"train --model svm --solver newton ok.svm m",
       "error: --solver newton: the hinge loss (svm) is not smooth, so it has no Newton step; use --solver syscd or "
       "sequential (dual SDCA)\n"},
      {"train --l1-ratio 2 --model elastic-net ok.svm m", "error: --l1-ratio: must be in [0, 1], got 2\n"},
      {"train -c 0 ok.svm m", "error: -c: C must be a positive number, got 0\n"},
      {"train --model ridge --penalty l1 ok.svm m",
       "error: --penalty l1 is not available for --model ridge (it uses l2); use --model lasso\n"},
      {"train --n-features 1 ok.svm m", "error: ok.svm:2:4: "},
      {"train --bogus ok.svm m", "error: The following argument was not expected: --bogus\n"},
      {"train --max-epochs x ok.svm m", "error: Could not convert: --max-epochs = x\n"},
      {"train", "error: TRAIN is required\n"},
      {"", "error: A subcommand is required\n"},
      {"predict missing.model ok.svm", "error: cannot open 'missing.model': No such file or directory\n"},
      {"predict ok.svm ok.svm", "error: ok.svm:1:1: expected 'format hetglm-1' as the first line, found '+1'\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args);
    const CliRun r = run(c.args);
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err.substr(0, c.err.size()), c.err) << r.err;
    if (c.err.back() == '\n') {
      EXPECT_EQ(r.err.substr(0, r.err.find('\n') + 1), c.err);
    }
    EXPECT_FALSE(fs::exists(dir / "m"));
  }
  // A failed predict leaves no output file; an unwritable model path fails with exit 1 and no file.
  const CliRun w = run("train -q ok.svm nodir/m");
  EXPECT_EQ(w.code, 1);
  EXPECT_EQ(w.err, "error: cannot write 'nodir/m': No such file or directory\n");
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos);
}

TEST_F(Cli, TrainingOverAnExistingModelKeepsItWhenTheInputIsBad) {
  ASSERT_EQ(run("train -q " + data("heart_scale") + " m").code, 0);
  const std::string before = slurp(dir / "m");
  write("bad.svm", "+1 1:nan\n");
  const CliRun r = run("train bad.svm m");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(slurp(dir / "m"), before);
}

// The same seed gives a byte-identical model file with the sequential solver and with syscd --deterministic (the
// default syscd lets threads race for buckets, so its models differ in the last digits from run to run).
TEST_F(Cli, ModelFileIsDeterministic) {
  for (const std::string solver : {"--solver sequential", "--solver syscd --threads 2 --deterministic"}) {
    SCOPED_TRACE(solver);
    ASSERT_EQ(run("train -q --seed 7 " + solver + " " + data("heart_scale") + " a").code, 0);
    ASSERT_EQ(run("train -q --seed 7 " + solver + " " + data("heart_scale") + " b").code, 0);
    EXPECT_EQ(slurp(dir / "a"), slurp(dir / "b"));
  }
}

// Regressions from trying to break the CLI (bad outputs, overlapping paths, silent option wrap-around).
TEST_F(Cli, OutputsNeverReplaceInputsDevicesOrEachOther) {
  write("tr.svm", "+1 1:0.5\n-1 2:1\n+1 1:1 2:0.25\n");
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n') + 1); };
  CliRun r = run("train -q tr.svm tr.svm");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err), "error: MODEL 'tr.svm' is the same file as TRAIN 'tr.svm': refusing to overwrite it\n");
  r = run("train -q --report-json m --test tr.svm tr.svm m");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err), "error: MODEL 'm' is the same file as --report-json 'm': refusing to overwrite it\n");
  EXPECT_FALSE(fs::exists(dir / "m"));
  ASSERT_EQ(run("train -q tr.svm m").code, 0);
  r = run("predict m tr.svm m");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(first_line(r.err), "error: OUTPUT 'm' is the same file as MODEL 'm': refusing to overwrite it\n");
  // A FIFO (or device) is never replaced by a regular file: it is written directly (a FIFO without a reader fails
  // at once rather than blocking), /dev/null works as in LIBLINEAR, and a symbolic link is written through.
  ASSERT_EQ(std::system(("mkfifo '" + (dir / "ff").string() + "'").c_str()), 0);
  r = run("train -q tr.svm ff");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cannot write 'ff': No such device or address\n");
  EXPECT_TRUE(fs::is_fifo(dir / "ff"));
  r = run("train -q tr.svm /dev/null");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_character_file("/dev/null"));
  write("target.txt", "old\n");
  fs::create_symlink("target.txt", dir / "link.model");
  ASSERT_EQ(run("train -q tr.svm link.model").code, 0);
  EXPECT_TRUE(fs::is_symlink(dir / "link.model"));
  EXPECT_EQ(slurp(dir / "target.txt").substr(0, 16), "format hetglm-1\n");
  // An unwritable report leaves the previous model untouched.
  const std::string before = slurp(dir / "m");
  r = run("train -q --seed 5 --report-json nodir/r.json tr.svm m");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "error: cannot write 'nodir/r.json': No such file or directory\n");
  EXPECT_EQ(slurp(dir / "m"), before);
  // Predictions that cannot be written to standard output fail instead of vanishing.
  const std::string cmd = "cd '" + dir.string() + "' && '" + HETGLM_CLI + "' predict m tr.svm >/dev/full 2>err.txt";
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_EQ(slurp(dir / "err.txt").rfind("error: cannot write the predictions to standard output: ", 0), 0u);
}

TEST_F(Cli, OptionValuesOutOfRangeAreErrorsNotWrapArounds) {
  write("tr.svm", "+1 1:0.5\n-1 2:1\n+1 1:1 2:0.25\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--seed -1", "error: --seed: expected an integer in [0, 18446744073709551615], got '-1'\n"},
      {"--seed 18446744073709551616",
       "error: --seed: expected an integer in [0, 18446744073709551615], got '18446744073709551616'\n"},
      {"--n-features -5", "error: --n-features: must be >= 0, got -5\n"},
      {"-B 1e39", "error: -B: the bias feature is stored as float32 and must be at most 3.40282e+38 in magnitude, got 1e+39\n"},
      {"-c 1e-320", "error: -c: C = 1e-320 makes lambda = 1/(C n) = inf out of double range\n"},
      {"--lambda 1e-320", "error: --lambda: lambda = 1e-320 is too small: 1/(lambda n) overflows\n"},
      {"--tol 1e-320",
       "error: --tol: must be at least 1e-15 (a duality gap in double precision is not certain below that), got 1e-320\n"},
  };
  for (const auto& [opt, err] : cases) {
    SCOPED_TRACE(opt);
    const CliRun r = run("train -q " + opt + " tr.svm m");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, err);
    EXPECT_FALSE(fs::exists(dir / "m"));
  }
}

TEST_F(Cli, HugeFeatureIndexIsRefusedBeforeAllocating) {
  write("huge.svm", "+1 2147483646:1\n-1 1:1\n");
  const CliRun r = run("train -q huge.svm m");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("error: training needs about ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("(2 samples, 2147483646 features, 2 nonzeros, 1 weight columns), more than the "),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "m"));
}

TEST_F(Cli, ModelCutInsideItsLastNumberIsRejected) {
  write("tr.svm", "+1 1:0.5\n-1 2:1\n+1 1:1 2:0.25\n");
  ASSERT_EQ(run("train -q tr.svm m").code, 0);
  std::string model = slurp(dir / "m");
  model.resize(model.size() - 3);  // drop the newline and the last two digits
  write("cut.model", model);
  const CliRun r = run("predict cut.model tr.svm");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(": truncated file: the last line does not end with a newline\n"), std::string::npos) << r.err;
}
