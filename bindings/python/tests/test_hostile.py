# SPDX-License-Identifier: Apache-2.0
"""Values the engine cannot hold (issue 18): the estimators refuse X, y and sample weights beyond float32 range
with a ValueError naming the entry, as the command line refuses such a value (they raised RuntimeError "numerical
failure" after training had started); dump_svmlight_file refuses what the readers refuse; load_svmlight_file
refuses a NaN or infinite label as the command line does."""
import numpy as np
import pytest
import scipy.sparse as sp

import hetglm

ESTIMATORS = [hetglm.LogisticRegression, hetglm.LinearSVC, hetglm.Ridge, hetglm.Lasso, hetglm.ElasticNet]
RANGE = "is out of float range (the engine stores data as float32: at most 3.40282e+38 in magnitude)"


@pytest.fixture(scope="module")
def small(data_dir):
    X, y = hetglm.load_svmlight_file(data_dir / "heart_scale")
    return X.toarray()[:60], y[:60]


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # the edge case: 20 epochs
@pytest.mark.parametrize("Est", ESTIMATORS)
def test_values_beyond_float32_are_value_errors_naming_the_entry(small, Est):
    X, y = small
    big = X.copy()
    big[3, 2] = 1e39
    with pytest.raises(ValueError) as e:
        Est().fit(big, y)
    assert str(e.value) == "X[3, 2] = 1e+39 " + RANGE
    with pytest.raises(ValueError) as e:
        Est().fit(sp.csr_matrix(big), y)
    assert str(e.value) == "X[3, 2] = 1e+39 " + RANGE
    with pytest.raises(ValueError) as e:
        Est().fit(sp.csc_matrix(-big), y)
    assert str(e.value) == "X[3, 2] = -1e+39 " + RANGE
    sw = np.ones(len(y))
    sw[5] = 1e300
    with pytest.raises(ValueError) as e:
        Est().fit(X, y, sample_weight=sw)
    assert str(e.value) == "sample_weight[5] = 1e+300 " + RANGE
    # At the edge of the range they train to a finite model.
    edge = X.copy()
    edge[3, 2] = 3e38
    assert np.all(np.isfinite(Est(max_iter=20).fit(edge, y).coef_))


BELOW = ("is below float range (the engine stores data as float32, whose nonzero values start at 1.17549e-38 in "
         "magnitude: this one would become 0 or lose its digits); rescale X")


@pytest.mark.parametrize("Est", ESTIMATORS)
def test_values_below_float32_are_value_errors_naming_the_entry(small, Est):
    """A nonzero float64 entry below float32's normal range became 0 (X * 1e-46: Ridge's coef_ all zero, no
    message) or a subnormal of a few digits (X * 1e-44: 2% off)."""
    X, y = small
    tiny = X.copy()
    tiny[4, 1] = 1e-46
    for Xin, text in [(tiny, "X[4, 1] = 1e-46 "), (sp.csr_matrix(tiny), "X[4, 1] = 1e-46 "),
                      (sp.csc_matrix(-tiny), "X[4, 1] = -1e-46 ")]:
        with pytest.raises(ValueError) as e:
            Est().fit(Xin, y)
        assert str(e.value) == text + BELOW
    tiny[4, 1] = 2e-40  # a float32 subnormal: representable, with 3 of its digits
    with pytest.raises(ValueError) as e:
        Est().fit(tiny, y)
    assert str(e.value) == "X[4, 1] = 2e-40 " + BELOW
    # float32 input holds its own subnormals exactly: trained as given.
    assert np.all(np.isfinite(Est(max_iter=20).fit(tiny.astype(np.float32), y).coef_))


@pytest.mark.parametrize("Est", [hetglm.Ridge, hetglm.Lasso, hetglm.ElasticNet])
def test_regressors_without_intercept_check_a_dense_x_in_its_conversion(small, Est):
    """Without an intercept a dense X reaches the conversion as given, which checks it (no whole-array temporaries
    in Python); the errors are the same, and name the caller's entry also when rows of weight 0 leave the fit."""
    X, y = small
    sw = np.ones(len(y))
    sw[0] = 0.0
    for value, text in [(1e39, "X[4, 1] = 1e+39 " + RANGE), (-1e-46, "X[4, 1] = -1e-46 " + BELOW),
                        (2e-40, "X[4, 1] = 2e-40 " + BELOW)]:
        bad = X.copy()
        bad[4, 1] = value
        for kw in [{}, {"sample_weight": sw}]:
            with pytest.raises(ValueError) as e:
                Est(fit_intercept=False).fit(bad, y, **kw)
            assert str(e.value) == text
            with pytest.raises(ValueError) as e:
                Est(fit_intercept=False).fit(np.asfortranarray(bad), y, **kw)
            assert str(e.value) == text


@pytest.mark.parametrize("Est", [hetglm.Ridge, hetglm.Lasso, hetglm.ElasticNet])
def test_a_dense_x_beyond_float32_once_centred_is_a_value_error(small, Est):
    """Every entry within float32 range, but X minus its feature means (the intercept's centring, done by the
    conversion) is not: a ValueError saying so, no model."""
    X, y = small
    bad = X.copy()
    bad[:, 0] = 3.4e38
    bad[::3, 0] = -3.4e38
    with pytest.raises(ValueError) as e:
        Est().fit(bad, y)
    assert str(e.value) == ("X has 20 entries that are beyond float32 range once centred (X minus its feature means, "
                            "for the intercept: outside 1.17549e-38 to 3.40282e+38 in magnitude); rescale X")


def test_paths_and_cv_name_the_callers_entry_below_float32(small):
    X, y = small
    tiny = X.copy()
    tiny[4, 1] = 1e-46
    for call in [lambda: hetglm.lasso_path(tiny, y), lambda: hetglm.lasso_path(sp.csc_matrix(tiny), y),
                 lambda: hetglm.LassoCV(cv=3).fit(tiny, y), lambda: hetglm.LogisticRegressionCV(cv=3).fit(tiny, y),
                 lambda: hetglm.RidgeCV().fit(tiny, y)]:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == "X[4, 1] = 1e-46 " + BELOW


def _corrupt_csr(X):
    A = sp.csr_matrix(X)
    A.indices = A.indices.copy()
    A.indices[3] = X.shape[1] + 40  # a column beyond the shape: scipy's own conversions then read out of bounds
    return A


CORRUPT = ("X: invalid CSR matrix (its index arrays do not describe a 60 x 13 matrix): indices must be < 13")


def test_a_corrupt_sparse_matrix_is_a_value_error_not_a_crash(small):
    """Ridge, Lasso, ElasticNet, RidgeCV and lasso_path crashed (segfault) on a CSR whose column index is beyond its
    shape: scipy's toarray / tocsc / products ran before the engine's index check; predict returned garbage."""
    X, y = small
    yc = (y > 0).astype(int)
    classifier = (hetglm.LogisticRegression, hetglm.LinearSVC)
    calls = [lambda Est=Est: Est().fit(_corrupt_csr(X), yc if Est in classifier else y) for Est in ESTIMATORS]
    calls += [lambda: hetglm.lasso_path(_corrupt_csr(X), y), lambda: hetglm.RidgeCV().fit(_corrupt_csr(X), y),
              lambda: hetglm.LassoCV(cv=3).fit(_corrupt_csr(X), y),
              lambda: hetglm.LogisticRegressionCV(cv=3).fit(_corrupt_csr(X), yc),
              lambda: hetglm.Ridge().fit(X, y).predict(_corrupt_csr(X)),
              lambda: hetglm.LogisticRegression().fit(X, yc).predict_proba(_corrupt_csr(X))]
    for call in calls:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == CORRUPT


def test_regression_targets_beyond_float32(small):
    X, y = small
    yy = y.copy()
    yy[7] = -1e300
    with pytest.raises(ValueError) as e:
        hetglm.Ridge().fit(X, yy)
    assert str(e.value) == "y[7] = -1e+300 " + RANGE


def test_dump_refuses_what_the_readers_refuse(tmp_path):
    X = np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 4.0]])
    y = np.array([1.0, -1.0])
    out = tmp_path / "d.svm"
    for value, msg in [(np.nan, "X[1, 2] = nan is not a finite number (the svmlight readers refuse NaN and infinity)"),
                       (-np.inf, "X[1, 2] = -inf is not a finite number (the svmlight readers refuse NaN and infinity)"),
                       (1e300, "X[1, 2] = 1e+300 is out of float range (the hetglm reader refuses feature values "
                               "beyond 3.40282e+38 in magnitude: the engine stores float32)")]:
        bad = X.copy()
        bad[1, 2] = value
        for Xin in (bad, sp.csr_matrix(bad)):
            with pytest.raises(ValueError) as e:
                hetglm.dump_svmlight_file(Xin, y, out)
            assert str(e.value) == "dump_svmlight_file: " + msg
    with pytest.raises(ValueError) as e:
        hetglm.dump_svmlight_file(X, np.array([1.0, np.nan]), out)
    assert str(e.value) == ("dump_svmlight_file: y[1] = nan is not a finite number (the svmlight readers refuse NaN "
                            "and infinite labels)")
    assert not out.exists()
    hetglm.dump_svmlight_file(X, y, out)  # the good data still round-trips
    X2, y2 = hetglm.load_svmlight_file(out, zero_based=True)
    np.testing.assert_array_equal(X2.toarray(), X)


def test_load_refuses_a_nan_or_infinite_label_as_the_cli(tmp_path):
    for label, col in [("nan", 1), ("-inf", 1)]:
        p = tmp_path / "l.svm"
        p.write_bytes(b"1 1:1\n" + label.encode() + b" 1:2\n")
        with pytest.raises(ValueError) as e:
            hetglm.load_svmlight_file(p)
        assert str(e.value) == f"{p}:2:{col}: non-finite label '{label}'"


@pytest.mark.parametrize("Est", [hetglm.Ridge, hetglm.Lasso, hetglm.ElasticNet])
def test_regressors_refuse_a_sparse_x_with_3e9_columns_before_allocating(Est):
    # They grew to 23 GB and were killed (the feature means, a transposed copy: vectors of 3e9 entries); now the
    # engine's memory estimate (check_training_memory, the one train() applies to the classifiers) refuses X at once.
    X = sp.csr_matrix((np.array([1.0, 2.0, 1.5]), (np.array([0, 1, 2]), np.array([5, 2_999_999_999, 7]))),
                      shape=(3, 3_000_000_000))
    with pytest.raises(ValueError, match=r"^training needs about [0-9.]+ GB of memory \(3 samples, 3000000000 "
                                         r"features, 3 nonzeros, 1 weight column\), more than the [0-9.]+ GB "
                                         r"available$"):
        Est().fit(X, np.array([1.0, -1.0, 1.0]))


@pytest.mark.parametrize("kwargs, msg", [
    (dict(max_iter=10**12), "max_iter must be an integer in [1, 2147483647], got 1000000000000"),
    (dict(n_jobs=2**31), "n_jobs must be None or an integer in [-2147483647, 2147483647], got 2147483648"),
    (dict(random_state=2**70), "random_state must be None, an integer in [0, 2^64 - 1] or a numpy RandomState, got "
                               "1180591620717411303424"),
    (dict(random_state=-1), "random_state must be None, an integer in [0, 2^64 - 1] or a numpy RandomState, got -1"),
    (dict(multi_class="foo"), "multi_class must be 'auto', 'multinomial' or 'ovr', got 'foo'"),
    (dict(intercept_scaling=1e300), "intercept_scaling must be a positive number of at most 3.40282e+38 (the bias "
                                    "feature is stored as float32), got 1e+300"),
    (dict(class_weight={-1: float("nan"), 1: 1}), "class_weight[-1] must be a finite number >= 0, got nan"),
    (dict(class_weight={-1: -1.0, 1: 1}), "class_weight[-1] must be a finite number >= 0, got -1.0"),
    # A later hostile trial: messages that blamed the sample weights or 'training data', or did not name the
    # parameter (scikit-learn's check_random_state).
    (dict(class_weight={-1: 1e300}), "class_weight[-1] = 1e+300 is out of float range (at most 3.40282e+38, as "
                                     "sample_weight)"),
    (dict(class_weight={-1: 0, 1: 0}), "every sample has weight 0 (sample_weight times class_weight): nothing to "
                                       "train on"),
    (dict(random_state=1.5), "random_state: 1.5 cannot be used to seed a numpy.random.RandomState instance (give "
                             "None, an integer or a numpy RandomState)"),
    # Flags of the wrong type were taken as truth values (scikit-learn raises InvalidParameterError, a ValueError).
    (dict(fit_intercept="yes"), "fit_intercept must be True or False, got 'yes'"),
    (dict(warm_start="no"), "warm_start must be True or False, got 'no'"),
    (dict(verbose=-1), "verbose must be a non-negative integer or a bool, got -1"),
    # The engine's option errors in the parameter's name (it said "--accel-memory: cannot parse 'lots' ...").
    (dict(accel_memory="lots"), "accel_memory: cannot parse 'lots' (expected bytes with an optional K M G T Ki Mi "
                                "Gi Ti suffix, or a percentage such as 25%)"),
    # It said "-c: C = 1e+308 makes ...", the command line's option.
    (dict(C=1e308), "C: C = 1e+308 makes lambda = 1/(C n) = 0 out of double range"),
    (dict(C=1e-320), "C: C = 1e-320 makes lambda = 1/(C n) = inf out of double range"),
])
def test_parameters_beyond_what_the_engine_holds_are_value_errors(small, kwargs, msg):
    # Found by an adversarial trial: max_iter / n_jobs beyond 32 bits raised the binding's TypeError, a seed beyond
    # 64 bits or negative was wrapped (2**70 trained as 0), multi_class='foo' passed on binary data, intercept_scaling
    # 1e300 failed as a "numerical failure" after training started, a NaN class weight said "only one class".
    X, y = small
    with pytest.raises(ValueError) as e:
        hetglm.LogisticRegression(**kwargs).fit(X, y)
    assert str(e.value) == msg


@pytest.mark.parametrize("multi_class", ["auto", "ovr"])
def test_load_model_lists_classes_ascending_with_their_columns(small, tmp_path, multi_class):
    """A file lists its labels in the order they were trained: string labels '10', '9', '2' train in their string
    order (10, 2, 9), and load_model returned classes_ [10, 2, 9], so scikit-learn's metrics, which read
    predict_proba's columns as sorted classes, were silently wrong (roc_auc_score 0.254 instead of 1.0)."""
    X, y = small
    labels = np.array(["10", "9", "2"])[np.digitize(X[:, 0], np.quantile(X[:, 0], [0.33, 0.66]))]
    m = hetglm.LogisticRegression(multi_class=multi_class).fit(X, labels)
    m.save_model(tmp_path / "m.model")
    loaded = hetglm.load_model(tmp_path / "m.model")
    assert list(m.classes_) == ["10", "2", "9"] and list(loaded.classes_) == [2.0, 9.0, 10.0]
    order = [1, 2, 0]  # m's columns 10, 2, 9 -> 2, 9, 10
    assert np.allclose(loaded.predict_proba(X), m.predict_proba(X)[:, order], rtol=0, atol=1e-12)
    assert np.array_equal(loaded.predict(X), m.predict(X).astype(float))


def test_path_and_cv_grids_and_signatures_in_their_own_terms(small):
    """A later hostile trial: n_alphas=2.5 raised Python's "'float' object cannot be interpreted as an integer",
    LassoCV(alphas=2.5) trained at the one alpha 2.5 and alphas=[[.1, .2]] was flattened (scikit-learn refuses
    both), and Lasso.fit(..., check_input=False) (scikit-learn's signature) was a TypeError."""
    X, y = small
    grid = "alphas must be None, an int (the number of alphas) or a 1-D list of values, got "
    for call, msg in [(lambda: hetglm.lasso_path(X, y, n_alphas=2.5), "n_alphas must be an int >= 1, got 2.5"),
                      (lambda: hetglm.lasso_path(X, y, alphas=[[0.1, 0.2]]), grid + "[[0.1, 0.2]]"),
                      (lambda: hetglm.LassoCV(alphas=2.5).fit(X, y), grid + "2.5"),
                      (lambda: hetglm.ElasticNetCV(alphas=True).fit(X, y), grid + "True"),
                      (lambda: hetglm.LinearSVC(C=np.inf).fit(X, y),
                       "C must be a positive finite number, got inf (LinearSVC has no unpenalized form: the hinge "
                       "losses' minimiser need not exist without it)")]:
        with pytest.raises(ValueError) as e:
            call()
        assert str(e.value) == msg
    for Est in (hetglm.Lasso, hetglm.ElasticNet):
        np.testing.assert_array_equal(Est(alpha=0.01).fit(X, y, check_input=False).coef_,
                                      Est(alpha=0.01).fit(X, y).coef_)
