# SPDX-License-Identifier: Apache-2.0
"""Estimator API: inputs, errors, Pipeline / GridSearchCV, pickling, model files shared with the CLI,
Ctrl-C, the certificate attributes and the training-history plot."""
import os
import pickle
import shutil
import signal
import subprocess
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn.exceptions import ConvergenceWarning

import hetglm

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture(scope="module")
def cancer(data_dir):
    return hetglm.load_svmlight_file(data_dir / "breast-cancer_scale")


def test_dense_sparse_float32_and_csc_inputs_agree(cancer):
    X, y = cancer
    ref = hetglm.LogisticRegression(tol=1e-8).fit(X, y)
    ref32 = hetglm.LogisticRegression(tol=1e-8).fit(X.astype(np.float32), y)
    for Xi in (X.toarray(), X.toarray().astype(np.float32), X.tocsc(), X.astype(np.float32),
               X.tocsc().astype(np.float32), np.asfortranarray(X.toarray())):
        est = hetglm.LogisticRegression(tol=1e-8).fit(Xi, y)
        # float64 input trains on its float64 values, float32 input on its own (docs/python.md, "Data")
        np.testing.assert_allclose(est.coef_, ref32.coef_ if Xi.dtype == np.float32 else ref.coef_, rtol=1e-12,
                                   atol=1e-12)
    # each within what its certificate allows of its own optimum, ||w - w*|| <= sqrt(2 gap / lambda), and the two optima
    # within the float32 rounding of X
    bound = 2 * np.sqrt(2 * 1e-8 * ref.primal_objective_ / ref.lambda_) + 1e-6
    np.testing.assert_allclose(ref32.coef_, ref.coef_, rtol=0, atol=bound)
    assert ref.coef_.shape == (1, X.shape[1]) and ref.intercept_.shape == (1,)
    assert ref.n_features_in_ == X.shape[1]
    np.testing.assert_array_equal(ref.classes_, [2.0, 4.0])
    assert ref.predict_proba(X).shape == (X.shape[0], 2)
    np.testing.assert_allclose(ref.predict_proba(X).sum(axis=1), 1.0)


def test_dense_bias_column_appended_by_the_conversion(cancer):
    # A dense X gets its bias column while it is converted (Matrix.bias_column; the engine then adds none): the
    # same models as the engine's own bias column on CSR input, for full rows, rows with zeros, intercept_scaling
    # other than 1, one-vs-rest and the multinomial model.
    from hetglm import _hetglm
    X, y = cancer
    rng = np.random.default_rng(3)
    full = rng.normal(size=(300, 7))
    yf = (full @ rng.normal(size=7) + 0.3 * rng.normal(size=300) > 0).astype(float)
    y3 = np.digitize(full[:, 0] + 0.5 * full[:, 1], [-0.5, 0.5])
    for Xd, yy, kw in [(X.toarray(), y, {}), (full, yf, dict(intercept_scaling=2.5)), (full, y3, {}),
                       (full, y3, dict(multi_class="ovr"))]:
        M = _hetglm.matrix_from_dense(np.ascontiguousarray(Xd), False, 2.5)
        assert M.shape == (Xd.shape[0], Xd.shape[1] + 1) and M.bias_column == 2.5
        dense = hetglm.LogisticRegression(tol=1e-10, **kw).fit(Xd, yy)
        csr = hetglm.LogisticRegression(tol=1e-10, **kw).fit(sp.csr_matrix(Xd), yy)
        np.testing.assert_allclose(dense.coef_, csr.coef_, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dense.intercept_, csr.intercept_, rtol=1e-12, atol=1e-12)
        assert dense.n_features_in_ == Xd.shape[1]
    M = _hetglm.matrix_from_dense(full, False, 1.0)
    opts = hetglm.LogisticRegression()._options("logistic", "l2", C=1.0, bias=2.0)
    with pytest.raises(ValueError) as e:
        _hetglm.train(M, yf, opts, None, False, None)
    assert str(e.value) == "the matrix carries a bias column of value 1 but options.bias is 2"
    with pytest.raises(ValueError) as e:
        _hetglm.matrix_from_dense(full, True, 1.0)
    assert str(e.value) == "matrix_from_dense: a bias column needs samples as rows"


def test_certificate_attributes(cancer):
    X, y = cancer
    est = hetglm.LinearSVC(loss="hinge", tol=1e-6, max_iter=100000).fit(X, y)
    assert est.duality_gap_ >= 0
    assert est.duality_gap_ <= 1e-6 * abs(est.primal_objective_)
    h = est.training_history_
    assert h and set(h[0]) == {"epoch", "seconds", "primal", "gap"}
    assert h[-1]["epoch"] == est.n_iter_
    assert h[-1]["gap"] == pytest.approx(est.duality_gap_, rel=1e-12)
    assert all(a["seconds"] <= b["seconds"] for a, b in zip(h, h[1:]))
    # the primal objective reported is the engine's P(w) = (1/n) sum hinge + lambda/2 ||w||^2 (bias included)
    Xb = sp.hstack([X, np.ones((X.shape[0], 1))]).tocsr()
    w = np.append(est.coef_.ravel(), est.intercept_)
    yy = np.where(y == est.classes_[1], 1.0, -1.0)
    P = np.mean(np.maximum(0, 1 - yy * (Xb @ w))) + 0.5 / X.shape[0] * (w @ w)
    assert est.primal_objective_ == pytest.approx(P, rel=1e-6)


def test_input_errors(cancer):
    X, y = cancer
    Xd = X.toarray()
    bad = Xd.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        hetglm.LogisticRegression().fit(bad, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        hetglm.Ridge().fit(Xd, y[:-1])
    with pytest.raises(ValueError, match="Expected 2D array"):
        hetglm.Lasso().fit(Xd[:, 0], y)
    with pytest.raises(ValueError, match=r"unknown device 'tpu' \(expected one of cpu, auto"):
        hetglm.LogisticRegression(device="tpu").fit(Xd, y)
    assert "cpu" in hetglm.backends and all(" " not in b for b in hetglm.backends)  # one name per entry
    if "cuda" not in hetglm.backends:
        with pytest.raises(ValueError, match="device 'cuda' is not compiled in"):
            hetglm.LogisticRegression(device="cuda").fit(Xd, y)
    with pytest.raises(ValueError, match="X has 5 features, but LogisticRegression is expecting 10 features"):
        hetglm.LogisticRegression().fit(Xd, y).predict(Xd[:, :5])
    with pytest.raises(ValueError, match="C must be a positive number"):
        hetglm.LinearSVC(C=-1).fit(Xd, y)
    with pytest.raises(ValueError, match="sample_weight"):
        hetglm.Ridge().fit(Xd, y, sample_weight=np.ones(3))


def test_engine_errors_keep_the_engine_message(cancer, tmp_path):
    X, y = cancer
    # A combination with no model is refused in the estimator's own terms (not the CLI's flags).
    with pytest.raises(ValueError) as e:
        hetglm.LinearSVC(loss="hinge", penalty="l1").fit(X, y)
    assert str(e.value) == ("The combination of penalty='l1' and loss='hinge' is not supported "
                            "(use loss='squared_hinge' for an L1-penalized SVM)")
    bad = tmp_path / "bad.model"
    bad.write_text("format hetglm-1\nsolver_type L2R_LR\nnr_class x\n")
    with pytest.raises(ValueError, match=r"bad.model:3:"):
        hetglm.load_model(bad)
    with pytest.raises(FileNotFoundError, match="cannot open"):
        hetglm.load_model(tmp_path / "missing.model")
    with pytest.raises(OSError, match="cannot write"):
        hetglm.Ridge().fit(X, y).save_model(tmp_path / "no-such-dir" / "m.model")


def test_pipeline_and_grid_search(cancer, housing):
    X, y = cancer
    pipe = make_pipeline(StandardScaler(with_mean=False), hetglm.LogisticRegression())
    grid = GridSearchCV(pipe, {"logisticregression__C": [0.01, 1.0]}, cv=3).fit(X, y)
    assert grid.best_params_["logisticregression__C"] in (0.01, 1.0)
    assert grid.score(X, y) > 0.95
    Xh, yh = housing
    grid = GridSearchCV(hetglm.Lasso(), {"alpha": [0.01, 0.1, 1.0]}, cv=3).fit(Xh, yh)
    assert grid.best_estimator_.alpha in (0.01, 0.1, 1.0)
    svc = GridSearchCV(make_pipeline(hetglm.LinearSVC()), {"linearsvc__loss": ["hinge", "squared_hinge"]},
                       cv=3).fit(X, y)
    assert svc.score(X, y) > 0.95


def test_pickle_and_params_round_trip(cancer):
    X, y = cancer
    for est in (hetglm.LogisticRegression(C=0.3, class_weight="balanced"), hetglm.LinearSVC(loss="hinge"),
                hetglm.Ridge(alpha=3.0), hetglm.Lasso(alpha=0.01), hetglm.ElasticNet(l1_ratio=0.2)):
        params = est.get_params()
        est2 = type(est)().set_params(**params)
        assert est2.get_params() == params
        est.fit(X, y)
        back = pickle.loads(pickle.dumps(est))
        np.testing.assert_array_equal(back.predict(X), est.predict(X))
        assert back.duality_gap_ == est.duality_gap_


def test_save_and_load_model(cancer, housing, tmp_path, data_dir):
    X, y = cancer
    Xh, yh = housing
    for est, (Xi, yi) in [(hetglm.LogisticRegression(C=0.3), cancer), (hetglm.LinearSVC(C=2.5), cancer),
                          (hetglm.Ridge(alpha=3.0), housing), (hetglm.Lasso(alpha=0.05), housing),
                          (hetglm.ElasticNet(alpha=0.05), housing)]:
        est.fit(Xi, yi)
        path = tmp_path / f"{type(est).__name__}.model"
        est.save_model(path)
        assert path.read_text().startswith("format hetglm-1\n")
        back = hetglm.load_model(path)
        assert type(back) is type(est)
        np.testing.assert_array_equal(back.predict(Xi), est.predict(Xi))
        np.testing.assert_allclose(back.coef_, est.coef_, rtol=0, atol=0)
        assert back.lambda_ == est.lambda_
        assert f"\nn_samples {Xi.shape[0]}\n" in path.read_text()
        if isinstance(est, (hetglm.Lasso, hetglm.ElasticNet)):  # lambda = alpha: the hyperparameter comes back
            assert back.alpha == est.alpha == 0.05
        elif isinstance(est, hetglm.Ridge):  # lambda = alpha / n, n from the file's n_samples
            assert back.alpha == 3.0
        else:  # lambda = 1 / (C n)
            assert back.C == est.C
    # an elastic-net logistic model comes back with its l1_ratio: a refit of what load_model gives trains that model
    en = hetglm.LogisticRegression(C=0.3, l1_ratio=0.5).fit(X, y)
    en.save_model(tmp_path / "en.model")
    en_back = hetglm.load_model(tmp_path / "en.model")
    assert en_back.l1_ratio == 0.5 and en_back._resolved_penalty() == "elasticnet"
    np.testing.assert_array_equal(en_back.fit(X, y).coef_, en.coef_)
    for l1_ratio, name in ((1.0, "l1"), (0.0, "l2")):  # (as scikit-learn 1.9 spells them: penalty 'auto' from l1_ratio)
        hetglm.LogisticRegression(C=0.3, l1_ratio=l1_ratio).fit(X, y).save_model(tmp_path / "p.model")
        back_p = hetglm.load_model(tmp_path / "p.model")
        assert (back_p.penalty, back_p.l1_ratio, back_p._resolved_penalty()) == ("auto", l1_ratio, name)
    # C as a user gives it comes back exactly (1/(lambda n) alone gives 4.000000000000001 or 1.0000000000000002)
    for C in (4.0, 1.0, 0.1, 3.0, 1e-3, 123.456):
        hetglm.LogisticRegression(C=C).fit(X, y).save_model(tmp_path / "c.model")
        assert hetglm.load_model(tmp_path / "c.model").C == C
        if hasattr(est, "predict_proba"):
            np.testing.assert_allclose(back.predict_proba(Xi), est.predict_proba(Xi), rtol=1e-15)


def test_model_paths_are_file_names_and_labels_must_survive_the_file(cancer, tmp_path, monkeypatch):
    """save_model / load_model take a str, bytes or os.PathLike: an open file object was turned into a file name by
    str() (a file named "<_io.TextIOWrapper ...>" appeared, the open file stayed empty). Integer class labels beyond
    2^53 have no exact double, the file's label type: save_model refuses them instead of writing a file that loads
    with a duplicate label or predicts another number."""
    X, y = cancer
    est = hetglm.LogisticRegression().fit(X, y)
    monkeypatch.chdir(tmp_path)
    est.save_model(b"bytes.model")
    assert (tmp_path / "bytes.model").read_text().startswith("format hetglm-1\n")
    np.testing.assert_array_equal(hetglm.load_model(b"bytes.model").predict(X), est.predict(X))
    with open(tmp_path / "open.model", "w") as f:
        with pytest.raises(TypeError, match=r"^save_model: path must be a file name \(str, bytes or os.PathLike\), "
                                            r"got TextIOWrapper$"):
            est.save_model(f)
    with open(tmp_path / "bytes.model") as f:
        with pytest.raises(TypeError, match=r"^load_model: path must be a file name"):
            hetglm.load_model(f)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bytes.model", "open.model"]
    yy = np.where(y == y.max(), 2 ** 60 + 1, 2 ** 60)
    big = hetglm.LogisticRegression().fit(X, yy)
    with pytest.raises(ValueError, match=r"^save_model: class label 1152921504606846977 has no exact double value"):
        big.save_model(tmp_path / "big.model")
    assert not (tmp_path / "big.model").exists()
    ok = hetglm.LogisticRegression().fit(X, np.where(y == y.max(), 2 ** 53, 7))  # 2^53 is a double: kept
    ok.save_model(tmp_path / "ok.model")
    np.testing.assert_array_equal(hetglm.load_model(tmp_path / "ok.model").predict(X), ok.predict(X))


def _cli():
    for cand in (os.environ.get("HETGLM_CLI"), os.path.join(ROOT, "build", "bin", "hetglm"), shutil.which("hetglm")):
        if cand and os.path.exists(cand):
            return cand
    return None


@pytest.mark.skipif(_cli() is None, reason="the hetglm CLI is not built (build/bin/hetglm)")
def test_models_move_between_python_and_cli(tmp_path, data_dir):
    cli = _cli()
    X, y = hetglm.load_svmlight_file(data_dir / "dna.scale")
    Xt, yt = hetglm.load_svmlight_file(data_dir / "dna.scale.t", n_features=X.shape[1])
    est = hetglm.LogisticRegression(tol=1e-6, multi_class="ovr").fit(X, y)  # the CLI trains one-vs-rest
    est.save_model(tmp_path / "py.model")
    out = tmp_path / "pred.txt"
    subprocess.run([cli, "predict", "-q", str(tmp_path / "py.model"), str(data_dir / "dna.scale.t"), str(out)],
                   check=True, capture_output=True)
    np.testing.assert_array_equal(np.loadtxt(out), est.predict(Xt))
    # The Python default (n_jobs=None) is solver 'auto' on one thread (here the Newton solver in the primal);
    # ask the CLI for the same.
    solver = ["--solver", "auto", "--threads", "1"]
    subprocess.run([cli, "train", "-q", "--tol", "1e-6", "-B", "1", *solver, str(data_dir / "dna.scale"),
                    str(tmp_path / "cli.model")], check=True, capture_output=True)
    back = hetglm.load_model(tmp_path / "cli.model")
    np.testing.assert_allclose(back.coef_, est.coef_, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(back.predict(Xt), est.predict(Xt))
    # The loaded estimator refits the file's model: one-vs-rest weights stay one-vs-rest (the default for more than
    # two classes is the softmax model), an L1 squared-hinge LinearSVC keeps its penalty.
    assert back.multi_class == "ovr"
    np.testing.assert_allclose(back.set_params(tol=1e-6).fit(X, y).coef_, est.coef_, rtol=1e-9, atol=1e-12)
    svc = hetglm.LinearSVC(penalty="l1", C=0.5, tol=1e-6).fit(X, y)
    svc.save_model(tmp_path / "svc.model")
    svc_back = hetglm.load_model(tmp_path / "svc.model")
    assert svc_back.penalty == "l1"
    np.testing.assert_allclose(svc_back.set_params(tol=1e-6).fit(X, y).coef_, svc.coef_, rtol=0, atol=0)
    # A model without a Python estimator (huber) is refused by name; the CLI predicts with it.
    subprocess.run([cli, "train", "-q", "--model", "huber", str(data_dir / "housing_scale"), str(tmp_path / "h.model")],
                   check=True, capture_output=True)
    with pytest.raises(ValueError, match=r"h\.model: model 'huber' has no Python estimator here \(hetglm predict "
                                         r"reads the file\)$"):
        hetglm.load_model(tmp_path / "h.model")


def test_ctrl_c_interrupts_a_long_fit(data_dir):
    X, y = hetglm.load_svmlight_file(data_dir / "a9a")
    # a9a eight times over (3.6e6 nonzeros): the interrupt at 0.5 s comes within the first 100 epochs, before the
    # epoch driver's rate rule would stop a fit at tol 1e-15 that cannot get there (docs/conventions.md, "Stalls")
    X, y = sp.vstack([X] * 8, format="csr"), np.tile(y, 8)
    est = hetglm.LinearSVC(loss="hinge", tol=1e-15, max_iter=3000)  # bounded: a missed interrupt fails, never hangs
    # The interrupt comes from a real-time timer signal (SIGALRM) whose Python handler is SIGINT's own,
    # default_int_handler: its C handler only trips Python's flag, and the engine's once-per-epoch poll runs the
    # Python handler, as for Ctrl-C. (A threading.Timer calling _thread.interrupt_main needs the GIL to fire, and in
    # one CI run of the whole suite it missed a 4.5 s fit: it is not the engine that this test checks.)
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            est.fit(X, y)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert not hasattr(est, "coef_")


def test_plot_training_history(cancer, housing):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    est = hetglm.LogisticRegression().fit(*cancer)
    ax, ax2 = hetglm.plot_training_history(est)
    assert ax.get_yscale() == "log"
    assert len(ax.get_lines()) == 1 and len(ax2.get_lines()) == 1
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), [h["gap"] for h in est.training_history_])
    with pytest.raises(ValueError, match="no training history"):
        hetglm.plot_training_history(hetglm.Ridge())
    # A multi-target fit: one line per target (they were drawn as one line through every target's points).
    X, y = housing
    multi = hetglm.Ridge().fit(X, np.column_stack([y, 2 * y + 1]))
    ax, ax2 = hetglm.plot_training_history(multi)
    assert [ln.get_label() for ln in ax.get_lines()] == ["duality gap (target 0)", "duality gap (target 1)"]
    np.testing.assert_allclose(ax.get_lines()[1].get_ydata(),
                               [h["gap"] for h in multi.training_history_ if h["target"] == 1])


def test_n_jobs_runs_the_parallel_solver_to_the_same_optimum(cancer, housing):
    for est, (X, y) in [(hetglm.LogisticRegression(tol=1e-10), cancer), (hetglm.Ridge(tol=1e-10), housing)]:
        seq = est.fit(X, y)
        p_seq, coef_seq = seq.primal_objective_, seq.coef_.copy()
        par = type(est)(tol=1e-10, n_jobs=2).fit(X, y)
        assert par.primal_objective_ == pytest.approx(p_seq, rel=1e-6)
        assert np.linalg.norm(par.coef_ - coef_seq) <= 1e-3 * np.linalg.norm(coef_seq)
        assert par.duality_gap_ <= 1e-10 * abs(par.primal_objective_) * (1 + 1e-9)


def test_formulation_parameter_and_reason(data_dir):
    # formulation= ('auto' | 'primal' | 'dual') reaches the engine; auto says what it chose and why, and which solver
    # ran (issue 9). Primal (Newton) and dual (SDCA) reach the same optimum on a9a at C = 1.
    X, y = hetglm.load_svmlight_file(data_dir / "a9a")
    auto = hetglm.LogisticRegression(tol=1e-8, fit_intercept=False).fit(X, y)
    assert auto.solver_ == "newton"
    assert auto.formulation_reason_.startswith("auto: 32561 x 123, 451592 nonzeros; dual SDCA")
    assert auto.formulation_reason_.endswith("chose primal")
    dual = hetglm.LogisticRegression(tol=1e-8, fit_intercept=False, formulation="dual").fit(X, y)
    assert dual.solver_ == "sequential"
    assert dual.formulation_reason_ == "requested with --formulation dual"
    assert abs(auto.primal_objective_ - dual.primal_objective_) <= 1e-6 * dual.primal_objective_
    svc = hetglm.LinearSVC(formulation="primal", fit_intercept=False).fit(X, y)
    assert svc.solver_ == "newton"
    assert hetglm.Ridge(formulation="dual").fit(X, y).formulation_reason_ == "requested with --formulation dual"
    with pytest.raises(ValueError, match=r"^formulation must be 'auto', 'primal' or 'dual', got 'both'$"):
        hetglm.LogisticRegression(formulation="both").fit(X, y)
    with pytest.raises(ValueError, match=r"^formulation='primal': loss='hinge' trains in the dual only"):
        hetglm.LinearSVC(loss="hinge", formulation="primal").fit(X, y)


def test_convergence_warning_says_when_the_fit_stalls(data_dir):
    # Issue 18: squared hinge on the separable mushrooms with every value times 1e6 cannot be certified in double
    # precision (the optimum is about 1e-15, below the gap's rounding); the warning says so, with the gap and the
    # tolerance, instead of claiming max_iter. (a9a times 1e6 stalled here too before the slope line search of the
    # Newton solver; it now certifies.)
    X, y = hetglm.load_svmlight_file(data_dir / "mushrooms")
    with pytest.warns(ConvergenceWarning, match=r"^hetglm: stopped after (\d+) iterations before the relative duality "
                                                r"gap reached tol=0.0001: no measurable progress after \1 iterations "
                                                r"\(.+\): relative gap [0-9.e+-]+, tolerance 1.0e-04 is not reachable "
                                                r"on this data \(float32 values, certificates in double precision\); "
                                                r"the smallest relative gap reached is [0-9.e+-]+; the model and its "
                                                r"certificate are kept\.$"):
        est = hetglm.LinearSVC(fit_intercept=False).fit(X * 1e6, y)
    assert int(np.max(est.n_iter_)) < est.max_iter


def test_convergence_warning_says_why_with_the_relative_gap(data_dir):
    # The epoch budget: "reached max_iter"; the Newton solver's rounding floor (L1 logistic on a9a bottoms out near a
    # relative gap of 3e-6): "stopped after N iterations ... not measurable"; both quote the relative gap.
    X, y = hetglm.load_svmlight_file(data_dir / "a9a")
    with pytest.warns(ConvergenceWarning, match=r"^hetglm: reached max_iter=2 epochs before the relative duality gap "
                                                r"reached tol=1e-08; the model and its certificate are kept \(relative "
                                                r"gap [0-9.e+-]+\)\. Increase max_iter\.$"):
        hetglm.LogisticRegression(tol=1e-8, max_iter=2).fit(X, y)
    # L1 logistic on a9a used to bottom out near a relative gap of 3e-6 (the Lipschitzed dual point); with the
    # rescaled dual point (docs/algorithms.md, "The rescaled dual point") it certifies tol=1e-8 with no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = hetglm.LogisticRegression(penalty="l1", tol=1e-8, fit_intercept=False).fit(X, y)
    assert est.n_iter_[0] < est.max_iter
    assert est.duality_gap_ <= 1e-8 * est.primal_objective_


def test_lasso_and_elastic_net_take_scikit_learns_parameters():
    """Every parameter of scikit-learn's Lasso / ElasticNet / LassoCV / ElasticNetCV / Ridge is a parameter here too (a configuration written for
    scikit-learn sets them): copy_X and precompute True / False / 'auto' are accepted (X is never modified; the engine
    decides on its Gram matrix itself), what the engine cannot do is refused by name."""
    from sklearn import linear_model as sklm
    for ours, theirs in [(hetglm.Lasso, sklm.Lasso), (hetglm.ElasticNet, sklm.ElasticNet),
                         (hetglm.LassoCV, sklm.LassoCV), (hetglm.ElasticNetCV, sklm.ElasticNetCV),
                         (hetglm.Ridge, sklm.Ridge)]:
        missing = set(theirs().get_params()) - set(ours().get_params())
        assert not missing, f"{ours.__name__} lacks scikit-learn's {sorted(missing)}"
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 8))
    y = X @ np.arange(8.0) + 0.1 * rng.standard_normal(60)
    ref = hetglm.Lasso(alpha=0.1, tol=1e-10).fit(X, y).coef_
    for kw in [dict(copy_X=False), dict(precompute=True), dict(precompute="auto"), dict(selection="cyclic")]:
        np.testing.assert_array_equal(hetglm.Lasso(alpha=0.1, tol=1e-10, **kw).fit(X, y).coef_, ref)
    cases = [(dict(positive=True), r"^positive=True is not supported by the hetglm engine$"),
             (dict(selection="random"), r"^selection='random' is not supported: the working-set solver visits its "
                                        r"working set cyclically"),
             (dict(selection="x"), r"^selection must be 'cyclic' or 'random', got 'x'$"),
             (dict(precompute=np.eye(8)), r"a precomputed one is not supported\), got ndarray$")]
    for kw, message in cases:
        for cls in (hetglm.Lasso, hetglm.ElasticNet, hetglm.LassoCV, hetglm.ElasticNetCV):
            with pytest.raises(ValueError, match=message):
                cls(**kw).fit(X, y)
    ridge = hetglm.Ridge(alpha=2.0, tol=1e-12).fit(X, y).coef_
    np.testing.assert_array_equal(hetglm.Ridge(alpha=2.0, tol=1e-12, solver="cholesky", copy_X=False).fit(X, y).coef_,
                                  ridge)
    with pytest.raises(ValueError, match=r"^positive=True is not supported by the hetglm engine$"):
        hetglm.Ridge(positive=True).fit(X, y)
    with pytest.raises(ValueError, match=r"^solver must be one of scikit-learn's Ridge solvers \(auto, svd, cholesky, "
                                         r"lsqr, sparse_cg, sag, saga, lbfgs; the engine trains with its own, see "
                                         r"formulation\), got 'qr'$"):
        hetglm.Ridge(solver="qr").fit(X, y)



def test_logistic_regression_and_linear_svc_take_scikit_learns_parameters():
    """scikit-learn's dual and solver (LogisticRegression, LogisticRegressionCV) and dual and multi_class (LinearSVC)
    are parameters here too: dual=True / False choose the dual (SDCA) / primal problem (the model file's solver_type
    says which ran; both reach the optimum the certificate bounds), scikit-learn's solver names change nothing but
    'liblinear', which keeps scikit-learn's one-vs-rest, and what the engine cannot do is refused by name."""
    from sklearn import linear_model as sklm, svm as sksvm
    from sklearn.datasets import load_iris, make_classification
    for ours, theirs in [(hetglm.LogisticRegression, sklm.LogisticRegression), (hetglm.LinearSVC, sksvm.LinearSVC)]:
        missing = set(theirs().get_params()) - set(ours().get_params())
        assert not missing, f"{ours.__name__} lacks scikit-learn's {sorted(missing)}"
    assert {"dual", "solver"} <= set(hetglm.LogisticRegressionCV().get_params())
    X, y = make_classification(400, 10, random_state=0)
    # float64 X at tol 1e-10: the dual (SDCA) and the primal (Newton) both train on the float64 values (docs/python.md,
    # "Data"), the same problem
    ref = hetglm.LogisticRegression(tol=1e-10).fit(X, y)
    for kw, solver_type in [(dict(dual=True), "L2R_LR_DUAL"), (dict(dual=False), "L2R_LR"),
                            (dict(solver="liblinear", dual=True), "L2R_LR_DUAL")]:
        est = hetglm.LogisticRegression(tol=1e-10, **kw).fit(X, y)
        assert est._model_dict()["solver_type"] == solver_type
        # Both certified at relative gap 1e-10: the objectives agree to that, the weights to sqrt(2 gap / lambda).
        assert abs(est.primal_objective_ - ref.primal_objective_) <= 1e-9 * ref.primal_objective_
        assert np.abs(est.coef_ - ref.coef_).max() <= np.sqrt(2 * 1e-10 * ref.primal_objective_ / ref.lambda_)
    for solver in ("lbfgs", "newton-cg", "newton-cholesky", "sag", "saga"):
        np.testing.assert_array_equal(hetglm.LogisticRegression(tol=1e-10, solver=solver).fit(X, y).coef_, ref.coef_)
    Xi, yi = load_iris(return_X_y=True)
    assert not hetglm.LogisticRegression(solver="liblinear").fit(Xi, yi).multinomial_
    assert hetglm.LogisticRegression().fit(Xi, yi).multinomial_
    svc = hetglm.LinearSVC(tol=1e-8, max_iter=5000).fit(X, y)
    for kw, solver_type in [(dict(dual=True), "L2R_L2LOSS_SVC_DUAL"), (dict(dual=False), "L2R_L2LOSS_SVC")]:
        est = hetglm.LinearSVC(tol=1e-8, max_iter=5000, **kw).fit(X, y)
        assert est._model_dict()["solver_type"] == solver_type
        assert abs(est.primal_objective_ - svc.primal_objective_) <= 1e-7 * svc.primal_objective_
    cases = [
        (hetglm.LogisticRegression, dict(dual=True, penalty="l1"),
         r"^dual=True supports penalty='l2' only \(the l1 models are trained in the primal\), as scikit-learn$", X, y),
        (hetglm.LogisticRegression, dict(dual=True, formulation="primal"),
         r"^dual=True asks for the dual formulation and formulation='primal' for the other: give one of them$", X, y),
        (hetglm.LogisticRegression, dict(dual="yes"), r"^dual must be True, False or 'auto', got 'yes'$", X, y),
        (hetglm.LogisticRegression, dict(solver="lbfgsb"),
         r"^solver must be one of scikit-learn's LogisticRegression solvers \(auto, lbfgs, liblinear, newton-cg, "
         r"newton-cholesky, sag, saga; the engine trains with its own, see formulation and dual\), got 'lbfgsb'$", X, y),
        (hetglm.LogisticRegression, dict(solver="liblinear", multi_class="multinomial"),
         r"^solver='liblinear' trains one-vs-rest, as scikit-learn's: it does not take multi_class='multinomial'$",
         X, y),
        (hetglm.LogisticRegression, dict(dual=True),
         r"^dual=True: the multinomial \(softmax\) model is trained in the primal \(multi_class='ovr' trains "
         r"one-vs-rest in the dual\)$", Xi, yi),
        (hetglm.LinearSVC, dict(multi_class="crammer_singer"),
         r"^multi_class='crammer_singer' is not supported by the hetglm engine \(one-vs-rest only: "
         r"multi_class='ovr'\)$", X, y),
        (hetglm.LinearSVC, dict(multi_class="x"), r"^multi_class must be 'ovr' or 'crammer_singer', got 'x'$", X, y),
        (hetglm.LinearSVC, dict(loss="hinge", dual=False),
         r"^dual=False: loss='hinge' trains in the dual only \(as scikit-learn's LinearSVC; loss='squared_hinge' has "
         r"a primal\)$", X, y),
        # The same requests through formulation name it (the engine's messages name the CLI's --formulation).
        (hetglm.LinearSVC, dict(loss="hinge", formulation="primal"),
         r"^formulation='primal': loss='hinge' trains in the dual only", X, y),
        (hetglm.LogisticRegression, dict(formulation="dual", penalty="elasticnet", l1_ratio=0.5),
         r"^formulation='dual' supports penalty='l2' only \(the elasticnet models are trained in the primal\)", X, y),
        (hetglm.LogisticRegression, dict(formulation="dual"),
         r"^formulation='dual': the multinomial \(softmax\) model is trained in the primal", Xi, yi),
        # No penalty has no useful dual (scikit-learn refuses penalty=None with dual=True).
        (hetglm.LogisticRegression, dict(dual=True, penalty=None),
         r"^dual=True: the unpenalized model \(penalty=None or C=inf\) is trained in the primal \(its dual, at "
         r"lambda = 1e-12 / n, stalls\), as scikit-learn refuses penalty=None with dual=True$", X, y),
        (hetglm.LogisticRegression, dict(dual=True, C=np.inf), r"^dual=True: the unpenalized model", X, y),
        # A non-string value names its parameter.
        (hetglm.LogisticRegression, dict(multi_class=np.array(["ovr", "x"])), r"^multi_class must be 'auto', "
         r"'multinomial' or 'ovr', got array", Xi, yi),
        (hetglm.LinearSVC, dict(multi_class=np.array(["ovr", "x"])), r"^multi_class must be 'ovr' or "
         r"'crammer_singer', got array", X, y),
    ]
    for cls, kw, message, XX, yy in cases:
        with pytest.raises(ValueError, match=message):
            cls(**kw).fit(XX, yy)


def test_weighted_mean_is_numpys_average_bit_for_bit():
    """The regressors' feature means (fit_intercept) without numpy's temporary X * sample_weight: the same bits as
    np.average for C and Fortran order, float64 and float32 X, unit and other weights, shapes with a partial last
    block."""
    from hetglm._estimators import _weighted_mean
    rng = np.random.default_rng(3)
    for shape in [(1, 1), (5, 3), (10007, 33), (70000, 3)]:
        for order in "CF":
            for dtype in (np.float64, np.float32):
                X = np.asarray(rng.standard_normal(shape), order=order, dtype=dtype)
                for sw in [np.ones(shape[0]), rng.random(shape[0]) * 3, np.full(shape[0], 2.0)]:
                    assert np.array_equal(_weighted_mean(X, sw, block=4096), np.average(X, axis=0, weights=sw))


@pytest.mark.parametrize("Est", [hetglm.Ridge, hetglm.Lasso, hetglm.ElasticNet])
def test_intercept_centres_a_dense_x_in_the_conversion_bit_for_bit(Est):
    """fit_intercept=True on a dense X: the conversion subtracts the (float32-rounded) feature means itself; the
    coefficients are those of a fit without intercept on the explicitly centred float64 X - mean, to the last bit
    (C and Fortran order, float32 and float64 X, zeros, a constant column, sample weights)."""
    rng = np.random.default_rng(11)
    X = rng.standard_normal((400, 12))
    X[X < -1.0] = 0.0
    X[:, 3] = 2.5
    y = X @ rng.standard_normal(12) + 1.5
    sw = rng.random(400) + 0.5
    for Xin in [X, np.asfortranarray(X), X.astype(np.float32), np.asfortranarray(X.astype(np.float32))]:
        for w in [None, sw]:
            kw = dict(tol=1e-6)
            m = Est(**kw).fit(Xin, y, sample_weight=w)
            ww = np.ones(len(y)) if w is None else w
            if Est is not hetglm.Ridge and w is not None:  # (Lasso and ElasticNet rescale the weights to sum to n first)
                ww = ww * (len(y) / ww.sum())
            mean = np.average(Xin, axis=0, weights=ww).astype(np.float32).astype(np.float64)
            y_mean = np.average(y.reshape(-1, 1), axis=0, weights=ww)[0]  # (as the estimator: y as a column)
            ref = Est(fit_intercept=False, **kw).fit(Xin - mean, y - y_mean, sample_weight=w)
            assert np.array_equal(m.coef_, np.asarray(ref.coef_).astype(Xin.dtype))  # (coef_ in X's dtype)
