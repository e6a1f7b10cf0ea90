# SPDX-License-Identifier: Apache-2.0
"""scikit-learn estimators over the hetglm engine.

Every estimator minimises the engine's objective (docs/conventions.md, "Objective and scaling"; README "The math in ten lines")

    P(w) = (1/n) sum_i c_i loss(y_i, x_i.w) + lambda R(w)

with the parameters mapped so the minimiser is scikit-learn's:

* ``LogisticRegression(C)`` with more than two classes: the multinomial (softmax) model, lambda = 1/(C n), one
  certificate for the weight matrix (``multi_class='ovr'``: one-vs-rest as liblinear).
* ``LogisticRegression(C)`` / ``LinearSVC(C)``: lambda = 1/(C n), as LIBLINEAR and scikit-learn's
  liblinear solver; ``fit_intercept=True`` appends a constant feature of value ``intercept_scaling`` whose
  weight is regularized like the others (scikit-learn's liblinear intercept), ``intercept_ =
  intercept_scaling * w_bias``.
* ``Ridge(alpha)``: lambda = alpha/n; ``Lasso(alpha)`` and ``ElasticNet(alpha, l1_ratio)``: lambda = alpha.
  ``fit_intercept=True`` fits an *unregularized* intercept by centring X and y (weighted means when
  sample weights are given), as scikit-learn does, then ``intercept_ = y_mean - X_mean . coef_``.
* ``sample_weight`` and ``class_weight`` become the per-sample weights c_i (Lasso / ElasticNet rescale
  them to sum to n, as scikit-learn; one-vs-rest: a class weight in its own class's column only, as liblinear).
  Samples of weight 0 are removed before training (same minimiser).
* ``tol`` is the relative duality gap: training stops when P(w) - D(alpha) <= tol |P(w)| (every fit is
  certified); ``max_iter`` is the epoch budget (reaching it warns with ConvergenceWarning).

Data are stored by the engine as float32 (as Snap ML does); coefficients, predictions and certificates are
computed in double; for float32 X, coef_ / intercept_ are float32 where scikit-learn's estimator keeps float32
(docs/python.md, "Data").
"""
from __future__ import annotations

import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model._base import LinearClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.extmath import safe_sparse_dot, softmax
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_array, check_is_fitted, validate_data

from . import _hetglm

__all__ = ["LogisticRegression", "LinearSVC", "Ridge", "Lasso", "ElasticNet", "load_model"]

_DEVICES = ("cpu", "auto", "cuda", "opencl", "fpga", "fpga-sim")
# Dense centred copies of sparse input are made up to this many entries (see _centre).
_MAX_DENSE_ENTRIES = 1 << 27
# LogisticRegression(penalty=None) or C=np.inf: the engine's duality gap needs lambda > 0, so the unpenalized problem
# is trained as L2 with lambda = _UNPENALIZED_LAMBDA / n (C = 1e12). Its minimiser's unpenalized objective is
# within lambda ||w||^2 / 2 of the unpenalized optimum (when that exists, i.e. the classes are not separable), far
# below any tol; on separable data, where scikit-learn's lbfgs runs to max_iter, this keeps a finite certified w.
_UNPENALIZED_LAMBDA = 1e-12


def _to_matrix(X, by_feature=False, estimator=None, bias=-1.0, float64=True, offset=None):
    """X (validated: ndarray float32/float64, or scipy CSR/CSC) -> the engine's Matrix (CSR, float32 values, and for
    float64 input with float64=True what the rounding to float32 drops: Matrix.float64), converted in C++ in parallel.
    float64: whether the fit can use the float64 values (every host solver at a tol below _hetglm.float64_tol;
    _float64_for). by_feature (the primal-only models, Lasso and ElasticNet): store X^T (features as
    rows), the layout their coordinate descent works on, straight from a dense array (C or Fortran order) or a CSC
    matrix, so the engine needs no transposed copy; CSR input is stored by sample (the engine transposes it).
    A dense array is checked by the conversion itself (NaN, infinity, outside float32 range: Matrix.bad_values); one
    that fails raises the ValueError scikit-learn's check raises (naming `estimator`) or _check_float_range's.
    bias >= 0 (the classifiers' intercept_scaling, samples as rows): a dense array gets its bias column in the same
    pass (Matrix.bias_column; the engine then adds none, where it would copy the whole matrix to append it).
    offset (dense X only: d float64 values): convert the centred X - offset in the same pass, as the float64 array
    X - offset would convert, without making it (the regressors' intercept, _centre); X itself is checked by the
    caller then, and a centred value beyond float32 range is a ValueError saying so."""
    if sp.issparse(X):
        csc = X.format == "csc"
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
        indptr, indices = X.indptr, X.indices
        if indptr.dtype != np.int64 and indptr.dtype != np.int32:
            indptr = indptr.astype(np.int64)
        if indices.dtype == np.int64 and indptr.dtype == np.int32:
            indptr = indptr.astype(np.int64)
        elif indices.dtype != np.int64 and indices.dtype != np.int32:
            indices = indices.astype(np.int32)
        data = X.data
        if data.dtype not in (np.float32, np.float64):
            data = data.astype(np.float64)
        return _hetglm.matrix_from_compressed(np.ascontiguousarray(indptr), np.ascontiguousarray(indices),
                                              np.ascontiguousarray(data), X.shape[0], X.shape[1], csc,
                                              bool(by_feature), bool(float64))
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    if not (X.flags.c_contiguous or X.flags.f_contiguous):
        X = np.ascontiguousarray(X)
    M = _hetglm.matrix_from_dense(X, bool(by_feature), float(bias) if bias >= 0 and not by_feature else -1.0,
                                  bool(float64), offset=None if offset is None else
                                  np.ascontiguousarray(offset, dtype=np.float64))
    if M.bad_values:
        _check_values(X, estimator)
        if offset is not None:
            raise ValueError(f"X has {M.bad_values} entries that are beyond float32 range once centred (X minus its "
                             f"feature means, for the intercept: outside 1.17549e-38 to 3.40282e+38 in magnitude); "
                             f"rescale X")
        raise ValueError(f"X has {M.bad_values} entries that are NaN, infinite or beyond float32 range")  # not reached
    return M


def _check_sparse_format(X):
    """A scipy sparse X's index arrays checked (scipy's ``check_format(full_check=True)``) before anything reads
    them: scipy's conversions and products trust them, and a column index beyond the shape made them read and
    write out of bounds (a crash in ``Ridge.fit``, garbage from ``predict``). Raises ValueError naming X and what
    is wrong; returns X."""
    if sp.issparse(X) and X.format in ("csr", "csc", "bsr"):
        try:
            X.check_format(full_check=True)
        except ValueError as e:
            raise ValueError(f"X: invalid {X.format.upper()} matrix (its index arrays do not describe a "
                             f"{X.shape[0]} x {X.shape[1]} matrix): {e}") from None
    return X


def _float64_for(tol):
    """Whether a fit at `tol` keeps float64 input's float64 values: every host solver (Newton, multinomial, the
    coordinate-descent and the working-set solvers) reads them below _hetglm.float64_tol (docs/formulation.md,
    "float64 data"); looser, they would cost the conversion's time for nothing."""
    return float(tol) < _hetglm.float64_tol  # (a numpy float32 tol would compare in float32)


def _check_values(X, estimator=None):
    """The value checks of X that the dense conversion folds into its pass (_to_matrix): scikit-learn's finite check
    (its own message, naming the estimator), then the float32 range (_check_float_range)."""
    check_array(X, accept_sparse=True, dtype=None, ensure_2d=False, ensure_all_finite=True, estimator=estimator,
                input_name="X")
    _check_float_range(X, "X", tiny=True)


_FLOAT_MAX = float(np.finfo(np.float32).max)
_INT_MAX = 2**31 - 1  # the engine's epoch budget and thread count are 32-bit ints


_FLOAT_MIN = float(np.finfo(np.float32).tiny)  # the smallest normal float32, 1.1754944e-38


_RANGE_CHUNK = 1 << 16  # entries per block of _range_flags (512 KiB of float64: in the L2 cache)


def _range_flags(vals, tiny):
    """(any |x| beyond float32 range or NaN, with ``tiny`` any nonzero |x| below its normal range) of the float
    array ``vals``, in blocks of _RANGE_CHUNK entries into two reused buffers: whole-array temporaries (|X| and two
    boolean masks) were fresh memory as large as X on every fit, whose page faults cost more than the test itself
    (100,000 x 500 float64 under KVM: 0.23-1.45 s, in blocks 0.04 s)."""
    flat = vals.ravel(order="K")  # (a view of a contiguous array)
    step = min(_RANGE_CHUNK, flat.size)
    mag, mask = np.empty(step), np.empty(step, dtype=bool)
    small = False
    for i in range(0, flat.size, step):
        block = flat[i:i + step]
        m = np.abs(block, out=mag[:block.size])
        if not (m.max() <= _FLOAT_MAX):  # (NaN as well)
            return True, small
        if tiny and not small:
            t = np.less(m, _FLOAT_MIN, out=mask[:block.size])
            small = bool(t.any()) and bool(np.any(t & (m > 0)))
    return False, small


def _check_float_range(a, name, tiny=False):
    """ValueError naming the first entry of ``a`` (a validated array or sparse matrix) beyond float32 range, as the
    command line refuses such a value: the engine stores X as float32, and a weight beyond it overflows. With
    ``tiny`` (X), also a nonzero float64 entry below float32's normal range (|x| < 1.1754944e-38): float32 would
    make it 0 or a subnormal of a few digits, and the fit would silently be another problem's."""
    vals = a.data if sp.issparse(a) else np.asarray(a)
    if vals.dtype == np.float32 or vals.size == 0:
        return
    big, small = _range_flags(vals, tiny)
    if not big and not small:
        return
    bad = (lambda v: np.abs(v) > _FLOAT_MAX) if big else (lambda v: (np.abs(v) < _FLOAT_MIN) & (v != 0))
    if sp.issparse(a):
        coo = a.tocoo()
        k = int(np.flatnonzero(bad(coo.data))[0])
        where, value = f"[{int(coo.row[k])}, {int(coo.col[k])}]", coo.data[k]
    else:
        flat = vals.ravel()
        k = int(np.flatnonzero(bad(flat))[0])
        where = "[" + ", ".join(str(int(i)) for i in np.unravel_index(k, vals.shape)) + "]"
        value = flat[k]
    if big:
        raise ValueError(f"{name}{where} = {float(value)!r} is out of float range (the engine stores data as float32: "
                         f"at most {_FLOAT_MAX:g} in magnitude)")
    raise ValueError(f"{name}{where} = {float(value)!r} is below float range (the engine stores data as float32, "
                     f"whose nonzero values start at {_FLOAT_MIN:g} in magnitude: this one would become 0 or lose its "
                     f"digits); rescale {name}")


def _positive_finite(x):
    """Whether x is a real number (not a bool), finite and > 0."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and np.isfinite(x) and x > 0


def _check_alpha(alpha):
    """alpha as a float; ValueError naming the parameter unless it is a positive finite number."""
    if not _positive_finite(alpha):
        raise ValueError(f"alpha must be a positive finite number, got {alpha!r}")
    return float(alpha)


def _threads_for(n_jobs):
    """The engine's thread count for scikit-learn's n_jobs: None or 1 one thread, k > 1 k threads, -1 (or 0) all
    cores (the engine's 0), -2 all but one, ... ValueError for anything but None or an integer."""
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)):
        raise ValueError(f"n_jobs must be None or an integer, got {n_jobs!r}")
    if n_jobs is not None and not -_INT_MAX <= n_jobs <= _INT_MAX:
        raise ValueError(f"n_jobs must be None or an integer in [-{_INT_MAX}, {_INT_MAX}], got {n_jobs!r}")
    if n_jobs is None or n_jobs == 1:
        return 1
    cores = os.cpu_count() or 1
    return int(n_jobs) if n_jobs > 0 else (0 if n_jobs in (0, -1) else max(1, cores + 1 + int(n_jobs)))


def _check_l1_ratio(l1_ratio):
    """l1_ratio as a float in [0, 1]; ValueError naming the parameter otherwise."""
    if not (isinstance(l1_ratio, numbers.Real) and not isinstance(l1_ratio, bool) and 0 <= l1_ratio <= 1):
        raise ValueError(f"l1_ratio must be a number in [0, 1], got {l1_ratio!r}")
    return float(l1_ratio)


def _penalty_from(penalty, l1_ratios):
    """scikit-learn 1.9's penalty for the l1_ratio values a fit may use (LogisticRegression: its one l1_ratio;
    LogisticRegressionCV: its l1_ratios): 'auto' (hetglm's default) and 'deprecated' (scikit-learn 1.9's) take it
    from them, None counting as 0: all 0 'l2', all 1 'l1', else 'elasticnet'; an explicit penalty ('l2', 'l1',
    'elasticnet' or None) as given. ValueError for another penalty."""
    if isinstance(penalty, str) and penalty in ("auto", "deprecated"):
        vals = [0.0 if v is None else v for v in l1_ratios]
        return "l2" if all(v == 0 for v in vals) else "l1" if all(v == 1 for v in vals) else "elasticnet"
    if penalty is not None and not (isinstance(penalty, str) and penalty in ("l2", "l1", "elasticnet")):
        raise ValueError(f"penalty must be 'auto', 'l2', 'l1', 'elasticnet' or None, got {penalty!r}")
    return penalty


def _resolve_penalty(penalty, l1_ratio):
    """The penalty LogisticRegression trains, None for none, as scikit-learn 1.9 resolves it (_penalty_from on the
    one l1_ratio); 'elasticnet' at l1_ratio 0 or 1 is 'l2' or 'l1' (the same objective). ValueError for another
    penalty, a bad l1_ratio (whatever the penalty), or 'elasticnet' without one."""
    r = None if l1_ratio is None else _check_l1_ratio(l1_ratio)
    p = _penalty_from(penalty, [r])
    if p == "elasticnet":
        if r is None:
            raise ValueError("l1_ratio must be set (between 0 and 1) when penalty='elasticnet'")
        p = "l2" if r == 0 else "l1" if r == 1 else p
    return p


def _check_cd_params(est):
    """scikit-learn's coordinate-descent parameters of Lasso, ElasticNet and their CV estimators: the ones the engine
    has no counterpart for are refused by name, the others accepted (copy_X: X is never modified; precompute: the
    engine builds a Gram matrix itself for small working sets, working_set.hpp)."""
    if est.positive:
        raise ValueError("positive=True is not supported by the hetglm engine")
    if est.selection not in ("cyclic", "random"):
        raise ValueError(f"selection must be 'cyclic' or 'random', got {est.selection!r}")
    if est.selection == "random":
        raise ValueError("selection='random' is not supported: the working-set solver visits its working set "
                         "cyclically (the features ranked by their dual constraint; working_set.hpp)")
    if not (isinstance(est.precompute, bool) or (isinstance(est.precompute, str) and est.precompute == "auto")):
        raise ValueError(f"precompute must be True, False or 'auto' (the engine decides when to build a Gram "
                         f"matrix; a precomputed one is not supported), got {type(est.precompute).__name__}")


def _check_tol_max_iter(tol, max_iter):
    """tol (the relative duality gap) and max_iter (the epoch budget) of an estimator or a path function."""
    if not _positive_finite(tol):
        raise ValueError(f"tol must be a positive finite number, got {tol!r}")
    if tol < _hetglm.min_tol:  # the engine's limit, in the parameter's name (the engine's message says --tol)
        raise ValueError(f"tol must be at least {_hetglm.min_tol:g} (a duality gap in double precision is not "
                         f"certain below that), got {tol!r}")
    if not (isinstance(max_iter, numbers.Integral) and 1 <= max_iter <= _INT_MAX):
        raise ValueError(f"max_iter must be an integer in [1, {_INT_MAX}], got {max_iter!r}")


def _seed(random_state):
    if random_state is None:
        return 1
    if isinstance(random_state, numbers.Integral):
        # The engine's seed is 64-bit: a value outside [0, 2^64 - 1] was wrapped silently (2**70 seeded as 0).
        if not 0 <= int(random_state) <= 0xFFFFFFFFFFFFFFFF:
            raise ValueError(f"random_state must be None, an integer in [0, 2^64 - 1] or a numpy RandomState, got "
                             f"{random_state!r}")
        return int(random_state)
    try:
        return int(check_random_state(random_state).randint(0, 2**31 - 1))
    except ValueError as e:  # (scikit-learn's message does not name the parameter)
        raise ValueError(f"random_state: {e} (give None, an integer or a numpy RandomState)") from None


class _HetGLMBase(BaseEstimator):
    """What every estimator shares: the engine call, its certificate attributes and the model file."""

    def _formulation_request(self):
        """'auto' | 'primal' | 'dual' (Lasso and ElasticNet have the primal only): with 'auto' the engine picks by
        the data's shape and says why (formulation_reason_)."""
        formulation = getattr(self, "formulation", "auto")
        if not (isinstance(formulation, str) and formulation in ("auto", "primal", "dual")):
            raise ValueError(f"formulation must be 'auto', 'primal' or 'dual', got {formulation!r}")
        return formulation

    def _check_common(self):
        if self.device not in _DEVICES:
            raise ValueError(f"unknown device {self.device!r} (expected one of {', '.join(_DEVICES)})")
        if not hasattr(_hetglm.TrainOptions(), "device") and self.device not in ("cpu", "auto"):
            raise ValueError(f"device {self.device!r} is not supported by this build (backends: {_hetglm.backends})")
        # Otherwise the engine checks the device (a ValueError with its message when it is not available).
        _check_tol_max_iter(self.tol, self.max_iter)
        # scikit-learn's types for the flags (fit_intercept='yes' and warm_start='no' were taken as truth values,
        # verbose=-1 as verbose output, where scikit-learn raises InvalidParameterError, a ValueError).
        for name in ("fit_intercept", "warm_start"):
            value = getattr(self, name, False)
            if not isinstance(value, (bool, np.bool_)):
                raise ValueError(f"{name} must be True or False, got {value!r}")
        verbose = getattr(self, "verbose", 0)
        if not (isinstance(verbose, (bool, np.bool_)) or (isinstance(verbose, numbers.Integral) and verbose >= 0)):
            raise ValueError(f"verbose must be a non-negative integer or a bool, got {verbose!r}")
        multi_class = getattr(self, "multi_class", "auto")
        # checked at every fit, not only for > 2 classes
        if not (isinstance(multi_class, str) and multi_class in ("auto", "multinomial", "ovr")):
            raise ValueError(f"multi_class must be 'auto', 'multinomial' or 'ovr', got {multi_class!r}")

    def _options(self, model, penalty="", C=None, lam=None, l1_ratio=0.5, bias=-1.0):
        o = _hetglm.TrainOptions()
        o.model = model
        o.penalty = penalty
        o.C = None if C is None else float(C)
        o.lambda_ = None if lam is None else float(lam)
        o.l1_ratio = float(l1_ratio)
        o.tol = float(self.tol)
        o.max_epochs = int(self.max_iter)
        o.seed = _seed(self.random_state)
        o.bias = float(bias)
        o.formulation = self._formulation_request()
        # Solver 'auto': the primal Newton solver for the primal of logistic / squared hinge / ridge; otherwise, with
        # n_jobs=None or 1, the sequential reference solver, and else the parallel CPU solver (SySCD,
        # deterministic for a given n_jobs) with n_jobs threads (-1 or 0: all cores).
        o.solver = "auto"
        n_jobs = getattr(self, "n_jobs", None)
        o.n_threads = _threads_for(n_jobs)
        if n_jobs is not None and n_jobs != 1:
            # (DuHL cannot be deterministic: the engine refuses it there, docs/duhl.md)
            if getattr(self, "device", "cpu") == "cpu" and getattr(self, "accel_memory", None) is None:
                o.deterministic = True
        if hasattr(o, "device"):
            o.device = self.device
        if getattr(self, "accel_memory", None) is not None and hasattr(o, "accel_memory"):
            o.accel_memory = str(self.accel_memory)
        return o

    def _warm_start_alpha(self, options, key, n_features, slot=0):
        """warm_start=True: the coordinate variables of the previous fit (dual variables for the dual, the weights
        for the primal) when that fit saw a problem of the same shape (`key`: samples, features, weight columns)
        and the same formulation; formulation='auto' then keeps the previous fit's formulation. Otherwise None (a
        cold start). `slot` numbers the targets of a multi-target Ridge. Raises ValueError when X has another
        number of features than the previous fit (as scikit-learn's warm starts do: the weights cannot carry over)."""
        state = getattr(self, "_warm_state", None) if getattr(self, "warm_start", False) else None
        if state and state[0].get("n_features", n_features) != n_features:
            raise ValueError(f"X has {n_features} features, but {type(self).__name__} was fitted with "
                             f"{state[0]['n_features']} features and warm_start=True starts from that fit; give X "
                             f"the same features or set warm_start=False")
        if not state or slot >= len(state) or state[slot]["key"] != key:
            return None
        prev = state[slot]
        if options.formulation == "auto":
            options.formulation = prev["formulation"]
        if options.formulation != prev["formulation"]:
            return None
        return prev["alpha"]

    def _train(self, X, y, c, options, M=None, key=None, slot=0, by_feature=False):
        """Run the engine on X (validated), y (float64 labels/targets), c (float64 weights > 0 or None). M: X
        already converted (multi-target Ridge converts once); key: the problem's shape for warm starts; by_feature:
        convert X to X^T (the primal-only models, _to_matrix)."""
        if M is None:
            M = _to_matrix(X, by_feature, self, bias=options.bias, float64=_float64_for(self.tol))
        y = np.ascontiguousarray(y, dtype=np.float64)
        if c is not None:
            c = np.ascontiguousarray(c, dtype=np.float64)
        alpha = None if key is None else self._warm_start_alpha(options, key, X.shape[1], slot)
        res = _engine_call(_hetglm.train, M, y, options, c, bool(self.verbose), alpha)
        cols = res["columns"]
        if key is not None:
            state = list(getattr(self, "_warm_state", None) or []) if slot > 0 else []
            del state[slot:]
            state.append({"key": key, "formulation": str(res["formulation"]), "n_features": X.shape[1],
                          "alpha": [np.asarray(col["alpha"], dtype=np.float64) for col in cols]})
            self._warm_state = state
        self.duality_gap_ = float(sum(col["gap"] for col in cols))
        self.primal_objective_ = float(sum(col["primal"] for col in cols))
        self.training_history_ = [
            {"epoch": h["epoch"], "seconds": h["seconds"], "primal": h["primal"], "gap": h["gap"],
             **({"column": k} if len(cols) > 1 else {})}
            for k, col in enumerate(cols) for h in col["history"]]
        self.lambda_ = float(res["resolved_lambda"])
        self.formulation_reason_ = str(res.get("formulation_reason", ""))
        self.solver_ = str(res.get("solver", ""))
        if not res["converged"] and not res["interrupted"]:
            rel = self.duality_gap_ / abs(self.primal_objective_) if self.primal_objective_ else self.duality_gap_
            epochs = max(int(col["epochs"]) for col in cols)
            stalled = [str(col["stalled"]) for col in cols if col["stalled"]]
            if self.duality_gap_ < 0:  # dual above primal beyond tol: rounding, not convergence
                warnings.warn(f"hetglm: the duality gap is negative beyond tol={self.tol} (relative {rel:.3g}): the "
                              f"objective values lose precision on this data (extreme feature values or sample "
                              f"weights); the model is kept without a certificate.", ConvergenceWarning)
            elif stalled:  # the stall rule (epoch_driver.hpp): no measurable progress any more
                warnings.warn(f"hetglm: stopped after {epochs} iterations before the relative duality gap reached "
                              f"tol={self.tol}: {stalled[0]}; the model and its certificate are kept.",
                              ConvergenceWarning)
            else:
                warnings.warn(f"hetglm: reached max_iter={self.max_iter} epochs before the relative duality gap "
                              f"reached tol={self.tol}; the model and its certificate are kept (relative gap "
                              f"{rel:.3g}). Increase max_iter.", ConvergenceWarning)
        return res

    def save_model(self, path):
        """Write the fitted model in the CLI's model file format (LIBLINEAR layout, docs/conventions.md, "Model file"), so
        ``hetglm predict MODEL DATA`` reads it. Regressors with an intercept store it as a bias row of value 1.
        ``path``: a file name (str, bytes or os.PathLike; not an open file: the file is replaced atomically).
        Raises OSError when the file cannot be written, ValueError for non-numeric class labels or integer labels
        without an exact double value (beyond 2^53), TypeError for a path that is not a file name."""
        check_is_fitted(self)
        _hetglm.save_model(_file_name(path, "save_model"), self._model_dict())

    def _model_dict(self):
        d = dict(self.engine_model_)
        d["w"] = np.asarray(d["w"], dtype=np.float64).ravel()
        return d


def _fill_from_model(est, d, n_features):
    est.engine_model_ = d
    est.n_features_in_ = n_features


def _encode_labels(y):
    """(classes_, encoded y) as np.unique(y, return_inverse=True). Numeric labels of exactly two values take three
    linear passes instead of np.unique's sort (400,000 labels: about 2 ms instead of 8-16 ms)."""
    if y.ndim == 1 and y.dtype.kind in "iuf" and y.size:
        lo, hi = y.min(), y.max()
        if lo != hi:
            is_hi = y == hi
            if np.all(is_hi | (y == lo)):
                return np.array([lo, hi], dtype=y.dtype), is_hi.astype(np.intp)
    return np.unique(y, return_inverse=True)


class _BaseClassifier(LinearClassifierMixin, _HetGLMBase):
    _engine_model_name = "logistic"

    def _formulation_request(self):
        """formulation combined with scikit-learn's ``dual``: True asks for the dual (SDCA), False for the primal,
        'auto' leaves the choice to ``formulation``; a contradiction of the two is an error, and so is a dual request
        for a model trained in the primal only (L1 / elastic net, no penalty)."""
        formulation = super()._formulation_request()
        dual = getattr(self, "dual", "auto")
        if isinstance(dual, str) and dual == "auto":
            want = formulation
        else:
            if not isinstance(dual, (bool, np.bool_)):
                raise ValueError(f"dual must be True, False or 'auto', got {dual!r}")
            want = "dual" if dual else "primal"
            if formulation not in ("auto", want):
                raise ValueError(f"dual={bool(dual)} asks for the {want} formulation and formulation={formulation!r} "
                                 "for the other: give one of them")
        if want == "dual" and self._unpenalized():
            raise ValueError(f"{self._asked()}: the unpenalized model (penalty=None or C=inf) is trained in the primal "
                             "(its dual, at lambda = 1e-12 / n, stalls), as scikit-learn refuses penalty=None with dual=True")
        if want == "dual" and self._penalty_name() != "l2":
            raise ValueError(f"{self._asked()} supports penalty='l2' only (the {self._penalty_name()} models are "
                             "trained in the primal), as scikit-learn")
        return want

    def _asked(self):
        """How the formulation was asked for, for messages: dual=... or formulation=..."""
        dual = getattr(self, "dual", "auto")
        return f"dual={bool(dual)}" if isinstance(dual, (bool, np.bool_)) else f"formulation={self.formulation!r}"

    def _resolved_penalty(self):
        return self.penalty  # (LogisticRegression resolves 'auto' from l1_ratio)

    def _penalty_name(self):
        return "l2" if self._unpenalized() else self._resolved_penalty()

    def _penalty(self):
        return ""

    def _unpenalized(self):
        return False

    def _multinomial(self, unpenalized):
        return False

    def _float32_coef(self):
        """Whether a float32 X gives float32 coef_ and intercept_ (and so float32 decision values and probabilities),
        as scikit-learn's estimator of the same name does (checked side by side, scikit-learn 1.9): LinearSVC's
        liblinear gives float64."""
        return False

    def fit(self, X, y, sample_weight=None):
        """Fit on X ((n_samples, n_features) array or CSR/CSC; stored as float32, float64 X at tol < 1e-6 with
        its float64 values as well, docs/python.md "Data") and y ((n_samples,) labels).
        Binary problems train one weight vector (positive class classes_[1]); k > 2 classes train one-vs-rest, or the
        multinomial (softmax) model (LogisticRegression's multi_class 'auto' / 'multinomial').
        Returns self. Raises ValueError for bad parameters or data, RuntimeError for a training failure."""
        self._check_common()
        if not (isinstance(self.C, numbers.Real) and not isinstance(self.C, bool) and self.C > 0):  # inf: unpenalized
            raise ValueError(f"C must be a positive number, got {self.C!r}")
        unpenalized = self._unpenalized()
        if self.fit_intercept and not (isinstance(self.intercept_scaling, numbers.Real) and
                                       0 < self.intercept_scaling <= _FLOAT_MAX):
            raise ValueError(f"intercept_scaling must be a positive number of at most {_FLOAT_MAX:g} (the bias feature "
                             f"is stored as float32), got {self.intercept_scaling!r}")
        if isinstance(self.class_weight, dict):
            for k, v in self.class_weight.items():
                if not (isinstance(v, numbers.Real) and np.isfinite(v) and v >= 0):
                    raise ValueError(f"class_weight[{k!r}] must be a finite number >= 0, got {v!r}")
                if v > _FLOAT_MAX:  # (the engine's message blamed the sample weights)
                    raise ValueError(f"class_weight[{k!r}] = {v!r} is out of float range (at most {_FLOAT_MAX:g}, "
                                     f"as sample_weight)")
        # A dense X is checked for NaN, infinity and float32 range by its conversion (_to_matrix): two to three passes
        # over it fewer (400,000 x 100 float64: about 140 ms of a 0.8 s fit); a sparse one here.
        X, y = validate_data(self, _check_sparse_format(X), y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], order="C", accept_large_sparse=True,
                             ensure_all_finite=False)
        check_classification_targets(y)
        if sp.issparse(X):
            _check_values(X, self)
        fit_classes = getattr(self, "_fit_classes", None)  # (LogisticRegressionCV's folds: every class of the data)
        if fit_classes is None:
            self.classes_, y_enc = _encode_labels(y)
        else:
            self.classes_, y_enc = fit_classes, np.searchsorted(fit_classes, y)
        if len(self.classes_) < 2:
            raise ValueError("This solver needs samples of at least 2 classes in the data, but the data "
                             f"contains only one class: {self.classes_[0]!r}")
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        _check_float_range(sw, "sample_weight")
        if self.class_weight is None:
            cw = np.ones(len(self.classes_))
        else:  # as scikit-learn's liblinear path: 'balanced' counts weighted samples
            with np.errstate(divide="ignore", invalid="ignore"):  # a class whose weights are all 0
                present = np.isin(self.classes_, y)  # ('balanced' needs each class in y: a fold's lacking one gets 1)
                cw = np.ones(len(self.classes_))
                cw[present] = compute_class_weight(self.class_weight, classes=self.classes_[present], y=y,
                                                   sample_weight=sw)
            cw = np.nan_to_num(cw, nan=0.0, posinf=0.0)
        # The class weights go to the engine (options.class_weights), which applies them as liblinear does: with two
        # classes and in the multinomial model to every sample of the class, in one-vs-rest to the class's own
        # column only (its positives; the other columns keep the sample weight: scikit-learn's LinearSVC). A class
        # of weight 0 drops its samples, which one-vs-rest cannot do for one column alone.
        ovr = len(self.classes_) > 2 and not self._multinomial(unpenalized)
        if ovr and np.any(cw[np.isin(self.classes_, y)] == 0):
            k = int(np.flatnonzero((cw == 0) & np.isin(self.classes_, y))[0])
            raise ValueError(f"class_weight: class {self.classes_[k].item()!r} has weight 0, which one-vs-rest "
                             f"cannot train (liblinear trains its column without its samples and the other columns "
                             f"with them); give it a positive weight, or drop its samples")
        c = sw if ovr else sw * cw[y_enc]
        keep = c > 0
        if not keep.any():  # ('training data': no samples to train on)
            raise ValueError("every sample has weight 0 (sample_weight times class_weight): nothing to train on")
        dropped = not keep.all()  # rows of weight 0 leave the fit
        if dropped:
            if not sp.issparse(X):
                _check_values(X, self)  # before the rows are selected: the error names the entry of the caller's X
            X, y_enc, c = X[keep], y_enc[keep], c[keep]  # (all zero: _check_sample_weight's ValueError above)
        bias = float(self.intercept_scaling) if self.fit_intercept else -1.0
        n = X.shape[0]
        model = self._engine_model_name
        self.multinomial_ = len(self.classes_) > 2 and self._multinomial(unpenalized)
        if self.multinomial_:
            model = "multinomial"
        if unpenalized:  # penalty=None or C=inf: L2 with lambda = _UNPENALIZED_LAMBDA / n (see its comment)
            opts = self._options(model, "l2", lam=_UNPENALIZED_LAMBDA / n, bias=bias)
        else:
            opts = self._options(model, self._penalty(), C=self.C,
                                 l1_ratio=0.5 if getattr(self, "l1_ratio", None) is None else self.l1_ratio, bias=bias)
        # Every class trains its column, also one without a sample of non-zero weight (scikit-learn's behaviour; the
        # engine's ProblemOptions::classes): the encoded classes 0 .. k-1.
        opts.classes = [float(k) for k in range(len(self.classes_))]
        if ovr:
            opts.class_weights = [(float(k), float(cw[k])) for k in range(len(cw)) if cw[k] != 1 and cw[k] > 0]
        key = (n, X.shape[1] + (1 if bias >= 0 else 0), len(self.classes_), model)
        res = self._train(X, y_enc.astype(np.float64), None if np.all(c == 1) else c, opts, key=key)
        nf = X.shape[1]
        w = np.asarray(res["w"])  # (nf [+1], n_columns); binary column: classes_[1] positive
        self.coef_ = np.ascontiguousarray(w[:nf].T)
        if self.fit_intercept:
            self.intercept_ = float(self.intercept_scaling) * w[nf].copy()
        else:
            self.intercept_ = np.zeros(w.shape[1])
        if X.dtype == np.float32 and self._float32_coef():
            self.coef_, self.intercept_ = self.coef_.astype(np.float32), self.intercept_.astype(np.float32)
        epochs = np.array([col["epochs"] for col in res["columns"]], dtype=np.int32)
        if self.multinomial_:  # one solve for the whole matrix: its iterations, shape (1,) as scikit-learn's
            epochs = epochs[:1]
        self.n_iter_ = epochs if isinstance(self, LogisticRegression) else int(epochs.max())
        d = {k: res[k] for k in ("solver_type", "nr_class", "nr_feature", "bias", "model", "penalty", "lambda",
                                 "l1_ratio", "n_samples", "formulation", "primal", "dual", "gap", "w")}
        # The engine saw the encoded labels 0..k-1: the model file lists the real ones (numeric labels only).
        enc = np.asarray(res["labels"]).astype(int)
        d["labels"] = self.classes_[enc]
        _fill_from_model(self, d, nf)
        return self

    def _model_dict(self):
        d = super()._model_dict()
        labels = np.asarray(d["labels"])
        try:
            d["labels"] = labels.astype(np.float64)
        except (TypeError, ValueError):
            raise ValueError("save_model: the model file stores numeric class labels only") from None
        # The file holds each label as a double (%.17g): an integer label beyond 2^53 would come back as another
        # number, or as a duplicate of its neighbour, which no loader accepts.
        if labels.dtype.kind in "iu":
            back = d["labels"].astype(labels.dtype) if np.all(np.abs(d["labels"]) < 2.0 ** 63) else None
            if back is None or not np.array_equal(back, labels):
                bad = [int(v) for v, b in zip(labels, d["labels"]) if int(b) != int(v)] if back is not None else []
                raise ValueError(f"save_model: class label {bad[0] if bad else labels[0]} has no exact double "
                                 f"value (integers beyond 2^53 = 9007199254740992 do not), and the model file "
                                 f"stores labels as doubles; relabel the classes") from None
        return d

    def decision_function(self, X):
        """Confidence scores (n_samples,) for two classes, (n_samples, n_classes) otherwise: X coef_.T +
        intercept_ (scikit-learn's LinearClassifierMixin, after the sparse index check)."""
        return super().decision_function(_check_sparse_format(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LogisticRegression(_BaseClassifier):
    """Logistic regression (scikit-learn's ``LogisticRegression`` objective, the intercept regularized as its
    liblinear solver does), trained by the engine's primal Newton solvers (Newton-CG for L2, newGLMNET's proximal
    Newton for L1 / elastic net) or SDCA (L2 on wide data, Shalev-Shwartz & Zhang 2013), with a certified duality
    gap (solver_ says which ran).

    Binary: minimises (1/n) sum_i c_i log(1 + exp(-y_i x_i.w)) + lambda R(w), lambda = 1/(C n); R = ||w||^2/2
    ('l2'), ||w||_1 ('l1') or l1_ratio ||w||_1 + (1 - l1_ratio) ||w||^2/2 ('elasticnet'). More than two classes
    (multinomial): (1/n) sum_i c_i (logsumexp(x_i W) - x_i W_{:,y_i}) + lambda sum_jk R(W_jk), W of shape
    (n_features, n_classes) (solvers/include/hetglm/solvers/multinomial.hpp). With two classes multi_class=
    'multinomial' trains the binary model (the softmax model of two classes is logistic regression: at twice the C
    for L2, the same C for L1).

    Parameters follow scikit-learn (1.9): C, l1_ratio (0, the default: 'l2'; 1: 'l1'; between: 'elasticnet'),
    penalty ('auto', the default: from l1_ratio, as scikit-learn 1.9's default 'deprecated', which is taken as the
    same; or 'l2' | 'l1' | 'elasticnet' | None given explicitly, as older scikit-learn), tol (relative duality
    gap), max_iter (epochs), fit_intercept / intercept_scaling (appended constant feature, regularized, as
    liblinear), class_weight (None | 'balanced' | dict), random_state (coordinate order), verbose (one line per
    epoch), warm_start (refits start from the previous fit's dual variables or weights), n_jobs (engine threads where supported),
    device ('cpu' | 'auto' | compiled-in accelerators), accel_memory (accelerator working-set bytes),
    multi_class ('auto': more than two classes train the multinomial (softmax) model, with every penalty, as
    current scikit-learn; 'multinomial'; 'ovr': one-vs-rest; solver='liblinear' trains one-vs-rest as
    scikit-learn's). penalty=None or C=np.inf:
    unpenalized (L2 with lambda = 1e-12/n). formulation ('auto' | 'primal' | 'dual') and scikit-learn's dual (True:
    the dual, SDCA, L2 penalty only; False: the primal; 'auto', the default here: formulation decides) choose the
    problem the engine solves, both reaching the same optimum. solver takes scikit-learn's names ('lbfgs',
    'liblinear', 'newton-cg', 'newton-cholesky', 'sag', 'saga') and 'auto' (the default): each reaches the same
    optimum, which the engine's own solver certifies; 'liblinear' keeps scikit-learn's one-vs-rest for more than two
    classes. ValueError for any other value of these.

    Attributes: coef_ (1, n_features) binary or (n_classes, n_features); intercept_ (1,) or (n_classes,);
    multinomial_ (whether the softmax model was trained);
    classes_; n_iter_ (epochs per weight column; (1,) for the multinomial model, one solve); duality_gap_ (P - D,
    summed over columns); primal_objective_; training_history_ (list of dicts epoch, seconds, primal, gap); lambda_; n_features_in_.
    """

    _engine_model_name = "logistic"

    def __init__(self, C=1.0, penalty="auto", l1_ratio=0.0, tol=1e-4, max_iter=1000, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, random_state=None, verbose=0, warm_start=False,
                 n_jobs=None, device="cpu", accel_memory=None, formulation="auto", multi_class="auto", dual="auto",
                 solver="auto"):
        self.C = C
        self.dual = dual
        self.solver = solver
        self.penalty = penalty
        self.l1_ratio = l1_ratio
        self.multi_class = multi_class
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.device = device
        self.accel_memory = accel_memory
        self.formulation = formulation

    _SKLEARN_SOLVERS = ("auto", "lbfgs", "liblinear", "newton-cg", "newton-cholesky", "sag", "saga")

    def _check_common(self):
        super()._check_common()
        if not (isinstance(self.solver, str) and self.solver in self._SKLEARN_SOLVERS):
            raise ValueError(f"solver must be one of scikit-learn's LogisticRegression solvers "
                             f"({', '.join(self._SKLEARN_SOLVERS)}; the engine trains with its own, see formulation and "
                             f"dual), got {self.solver!r}")
        if self.solver == "liblinear" and self.multi_class == "multinomial":
            raise ValueError("solver='liblinear' trains one-vs-rest, as scikit-learn's: it does not take "
                             "multi_class='multinomial'")
        p, r = self.penalty, self.l1_ratio
        if isinstance(p, str) and p in ("l2", "l1") and r is not None and _check_l1_ratio(r) not in (0.0, 1.0):
            warnings.warn(f"l1_ratio={r!r} is used only with penalty='elasticnet' or 'auto' (the default); "
                          f"penalty={p!r} trains the {p} model", UserWarning, stacklevel=3)

    def _resolved_penalty(self):
        """The penalty trained (None for none): _resolve_penalty(penalty, l1_ratio)."""
        return _resolve_penalty(self.penalty, self.l1_ratio)

    def _unpenalized(self):
        return self._resolved_penalty() is None or self.C == np.inf

    def _float32_coef(self):
        # scikit-learn's LogisticRegression keeps float32 but with solver='liblinear' (float64)
        return self.solver != "liblinear"

    def _multinomial(self, unpenalized):
        """More than two classes: 'auto' (default, as current scikit-learn) and 'multinomial' train the softmax model
        with any penalty (L2 or none: the engine's Newton-CG solver; L1 / elastic net: its proximal Newton solver,
        as scikit-learn 1.9's saga trains the multinomial model for these), 'ovr' one-vs-rest. multi_class itself is
        checked by _check_common, which fit runs first."""
        if self.solver == "liblinear":  # scikit-learn's liblinear trains one-vs-rest (multinomial refused there)
            return False
        multinomial = self.multi_class in ("multinomial", "auto")
        if multinomial and self._formulation_request() == "dual":
            raise ValueError(f"{self._asked()}: the multinomial (softmax) model is trained in the primal "
                             "(multi_class='ovr' trains one-vs-rest in the dual)")
        if multinomial and (self.device not in ("cpu", "auto") or self.accel_memory not in (None, "")):
            where = f"device={self.device!r}" if self.device not in ("cpu", "auto") else \
                f"accel_memory={self.accel_memory!r}"
            raise ValueError(f"{where}: the multinomial (softmax) model trains on the CPU only, by the Newton solvers "
                             f"(multi_class='ovr' trains one-vs-rest with {where})")
        return multinomial

    def _penalty(self):
        return {"l2": "l2", "l1": "l1", "elasticnet": "elastic-net"}[self._resolved_penalty()]

    def predict_proba(self, X):
        """Probabilities (n_samples, n_classes) in classes_ order: the softmax of the decision values for a
        multinomial model; one-vs-rest sigmoids normalized to sum 1 otherwise (as liblinear / LIBLINEAR -b 1)."""
        check_is_fitted(self)
        if getattr(self, "multinomial_", False):
            return softmax(self.decision_function(X), copy=False)
        return super()._predict_proba_lr(X)

    def predict_log_proba(self, X):
        """log of predict_proba."""
        return np.log(self.predict_proba(X))


class LinearSVC(_BaseClassifier):
    """Linear support vector classifier (scikit-learn's ``LinearSVC`` objective, LIBLINEAR's L2-regularized
    L1-loss (``loss='hinge'``) or L2-loss (``loss='squared_hinge'``, max(0, 1 - y z)^2) SVC), trained by SDCA
    in the dual with a certified duality gap. lambda = 1/(C n). Hinge SDCA converges as O(1/epsilon): tight
    ``tol`` needs a large ``max_iter``.

    Parameters as :class:`LogisticRegression` plus ``loss``; ``penalty`` is 'l2' ('l1' for squared hinge
    where the engine supports it); ``dual`` as there (True with penalty='l1' is a ValueError, as scikit-learn's);
    ``multi_class`` 'ovr' (scikit-learn's 'crammer_singer' is refused by name). Attributes as LogisticRegression;
    n_iter_ is the largest epoch count.
    """

    def __init__(self, C=1.0, loss="squared_hinge", penalty="l2", tol=1e-4, max_iter=1000, fit_intercept=True,
                 intercept_scaling=1.0, class_weight=None, random_state=None, verbose=0, warm_start=False,
                 n_jobs=None, device="cpu", accel_memory=None, formulation="auto", dual="auto", multi_class="ovr"):
        self.C = C
        self.loss = loss
        self.dual = dual
        self.multi_class = multi_class
        self.warm_start = warm_start
        self.penalty = penalty
        self.tol = tol
        self.max_iter = max_iter
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.device = device
        self.accel_memory = accel_memory
        self.formulation = formulation

    @property
    def _engine_model_name(self):
        if self.loss == "hinge":
            return "svm"
        if self.loss == "squared_hinge":
            return "squared-hinge"
        raise ValueError(f"loss must be 'hinge' or 'squared_hinge', got {self.loss!r}")

    def _check_common(self):
        mc = self.multi_class
        if isinstance(mc, str) and mc == "crammer_singer":
            raise ValueError("multi_class='crammer_singer' is not supported by the hetglm engine (one-vs-rest only: "
                             "multi_class='ovr')")
        if not (isinstance(mc, str) and mc == "ovr"):
            raise ValueError(f"multi_class must be 'ovr' or 'crammer_singer', got {self.multi_class!r}")
        if isinstance(self.C, numbers.Real) and not isinstance(self.C, bool) and self.C == np.inf:
            # (the engine's message named the command line's -c; LogisticRegression trains C=inf as no penalty)
            raise ValueError("C must be a positive finite number, got inf (LinearSVC has no unpenalized form: the "
                             "hinge losses' minimiser need not exist without it)")
        super()._check_common()

    def _formulation_request(self):
        formulation = super()._formulation_request()
        if formulation == "primal" and self.loss == "hinge":
            raise ValueError(f"{self._asked()}: loss='hinge' trains in the dual only (as scikit-learn's LinearSVC; "
                             "loss='squared_hinge' has a primal)")
        return formulation

    def _penalty(self):
        if self.penalty not in ("l2", "l1"):
            raise ValueError(f"penalty must be 'l2' or 'l1', got {self.penalty!r}")
        if self.penalty == "l1" and self.loss == "hinge":  # as scikit-learn's LinearSVC, in this API's terms
            raise ValueError("The combination of penalty='l1' and loss='hinge' is not supported "
                             "(use loss='squared_hinge' for an L1-penalized SVM)")
        return self.penalty


class _BaseRegressor(RegressorMixin, _HetGLMBase):
    _engine_model_name = "ridge"
    _rescale_weights = False
    # Primal-only models hand the engine X^T (Matrix.by_feature): their solvers work on features.
    _by_feature = False

    def _lambdas(self, n, n_targets):
        """The engine's lambda for each of n_targets targets on n samples."""
        raise NotImplementedError

    _multi_target = False  # Ridge: y may be (n_samples, n_targets)

    def fit(self, X, y, sample_weight=None):
        """Fit on X ((n_samples, n_features) array or CSR/CSC; stored as float32, float64 X at tol < 1e-6 with
        its float64 values as well but for Lasso / ElasticNet, docs/python.md "Data") and y ((n_samples,) targets;
        Ridge also (n_samples, n_targets): one engine fit per target on the same converted matrix).
        Returns self. Raises ValueError for bad parameters or data, RuntimeError for a training failure."""
        self._check_common()
        X, y = validate_data(self, _check_sparse_format(X), y, accept_sparse=["csr", "csc"],
                             dtype=[np.float64, np.float32], order=None if self._by_feature else "C", y_numeric=True,
                             accept_large_sparse=True, multi_output=self._multi_target)
        y = np.asarray(y, dtype=np.float64)
        # The engine's memory estimate before anything of n_features entries is made here (the feature means, a
        # transposed copy): a sparse X with 3e9 columns is refused at once, as the classifiers are by train().
        _hetglm.check_training_memory(X.shape[0], X.shape[1], X.nnz if sp.issparse(X) else X.size,
                                      self._options(self._engine_model_name).n_threads)
        # A dense X that reaches the conversion as it is (no intercept: not centred) is checked there, in its one
        # parallel pass (_to_matrix: Matrix.bad_values, the same ValueError), as the classifiers' X; otherwise here,
        # before centring would move a value into float32 range or out of it.
        checked_by_conversion = not sp.issparse(X) and not self.fit_intercept
        if not checked_by_conversion:
            _check_float_range(X, "X", tiny=True)
        _check_float_range(y, "y")
        Y = y.reshape(-1, 1) if y.ndim == 1 else y
        sw = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        _check_float_range(sw, "sample_weight")
        keep = sw > 0
        if not keep.all():
            if checked_by_conversion:
                _check_float_range(X, "X", tiny=True)  # before the rows are selected: the error names the caller's entry
            X, Y, sw = X[keep], Y[keep], sw[keep]
            if X.shape[0] == 0:
                raise ValueError("every sample has weight 0: nothing to train on")
        n = X.shape[0]
        nf = X.shape[1]
        if self._rescale_weights:
            sw = sw * (n / sw.sum())
        offset = None
        if self.fit_intercept:
            X_offset = np.asarray(sw @ X).ravel() / sw.sum() if sp.issparse(X) else _weighted_mean(X, sw)
            y_offset = np.average(Y, axis=0, weights=sw)
            Xt, X_offset, offset = _centring(X, X_offset)
            Yt = Y - y_offset
        else:
            X_offset, y_offset, Xt, Yt = np.zeros(nf), np.zeros(Y.shape[1]), X, Y
        M = _to_matrix(Xt, self._by_feature, estimator=self, float64=_float64_for(self.tol), offset=offset)
        c = None if np.all(sw == 1) else sw
        coefs, intercepts, epochs, gaps, primals, history, models = [], [], [], [], [], [], []
        lams = self._lambdas(n, Y.shape[1])
        for t in range(Y.shape[1]):
            opts = self._options(self._engine_model_name, lam=lams[t], l1_ratio=self._l1_ratio())
            res = self._train(Xt, Yt[:, t], c, opts, M=M, key=(n, nf), slot=t)
            w = np.asarray(res["w"])[:, 0]
            coefs.append(w[:nf].copy())
            intercepts.append(float(y_offset[t] - np.dot(X_offset, coefs[-1])) if self.fit_intercept else 0.0)
            epochs.append(int(res["columns"][0]["epochs"]))
            gaps.append(self.duality_gap_)
            primals.append(self.primal_objective_)
            history += [dict(h, target=t) for h in self.training_history_] if Y.shape[1] > 1 else self.training_history_
            d = {k: res[k] for k in ("solver_type", "nr_class", "labels", "nr_feature", "bias", "model", "penalty",
                                     "lambda", "l1_ratio", "n_samples", "formulation", "primal", "dual", "gap")}
            if self.fit_intercept:  # the intercept as a bias row of value 1, so the CLI predicts the same
                d["bias"] = 1.0
                d["w"] = np.append(coefs[-1], intercepts[-1]).reshape(-1, 1)
            else:
                d["w"] = np.asarray(res["w"])
            models.append(d)
        if y.ndim == 1:
            self.coef_, self.intercept_, self.n_iter_ = coefs[0], intercepts[0], epochs[0]
        else:  # scikit-learn's multi-target shapes: coef_ (n_targets, n_features), intercept_ (n_targets,); one
            # target of shape (n, 1): coef_ (n_features,) and intercept_ (1,), as scikit-learn 1.9's Ridge
            self.coef_ = np.vstack(coefs) if len(coefs) > 1 else coefs[0]
            self.intercept_ = np.asarray(intercepts) if self.fit_intercept else 0.0  # (scikit-learn's 0.0)
            self.n_iter_ = np.asarray(epochs, dtype=np.int32)
            self.duality_gap_, self.primal_objective_ = float(sum(gaps)), float(sum(primals))
            self.training_history_ = history
        if self._by_feature:  # Lasso / ElasticNet: scikit-learn's dual_gap_, P - D in its (1/2n) scaling, X's dtype;
            # per target for several (as scikit-learn's), and n_iter_ a number for y (n, 1) as there
            self.dual_gap_ = np.asarray(gaps, dtype=X.dtype) if len(gaps) > 1 else X.dtype.type(self.duality_gap_)
            if y.ndim == 2 and len(epochs) == 1:
                self.n_iter_ = epochs[0]
        # scikit-learn's dtypes: X's float dtype (float32 kept) for coef_ and a fitted intercept_ (a numpy scalar for
        # one target); an intercept not fitted stays the float 0.0
        self.coef_ = self.coef_.astype(X.dtype, copy=False)
        if self.fit_intercept:
            self.intercept_ = np.asarray(self.intercept_, dtype=X.dtype)[()]
        self.engine_models_ = models
        _fill_from_model(self, models[0], nf)
        return self

    def _model_dict(self):
        if len(getattr(self, "engine_models_", ())) > 1:
            raise ValueError(f"save_model: the model file stores one target; this {type(self).__name__} was fitted "
                             f"on {len(self.engine_models_)} targets")
        return super()._model_dict()

    def _l1_ratio(self):
        return 0.5

    def predict(self, X):
        """Predicted targets (n_samples,) = X coef_ + intercept_ (float32 when both X and coef_ are, as
        scikit-learn's; float64 otherwise)."""
        check_is_fitted(self)
        X = validate_data(self, _check_sparse_format(X), accept_sparse=["csr", "csc", "coo"], reset=False)
        return safe_sparse_dot(X, self.coef_.T) + self.intercept_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _weighted_mean(X, sw, block=1 << 16):
    """np.average(X, axis=0, weights=sw) of a dense X, bit for bit, without its temporary X * sw as large as X (fresh
    memory on every fit: 0.14-1.17 s of a Lasso fit on a 100,000 x 500 float64 X under KVM): X.mean in float64 for
    unit weights (the same sum, divided by the same n); a C-order X in blocks of rows whose weighted rows are added to
    the running sum in row order, as numpy's reduction over axis 0 adds them; a Fortran-order X in blocks of columns
    (each column's sum is its own)."""
    if np.all(sw == 1):
        return X.mean(axis=0, dtype=np.float64)  # (a float32 X summed in float64, as np.average's float64 products)
    if X.flags.f_contiguous and not X.flags.c_contiguous:
        step = max(1, block // max(1, X.shape[0]))
        return np.concatenate([np.average(X[:, j:j + step], axis=0, weights=sw) for j in range(0, X.shape[1], step)])
    step = max(1, block // max(1, X.shape[1]))
    acc = None
    for i in range(0, X.shape[0], step):
        rows = X[i:i + step] * sw[i:i + step, None]
        acc = np.add.reduce(rows if acc is None else np.concatenate([acc[None], rows]), axis=0)
    return acc / sw.sum()


def _rounded_offset(X_offset):
    """The feature means to subtract, rounded to float32 first (_centre)."""
    return np.asarray(X_offset, dtype=np.float32).astype(np.float64)


def _centring(X, X_offset):
    """(X for the conversion, the offset subtracted, the offset the conversion subtracts or None): a dense X is
    centred by the conversion itself (_to_matrix's offset: X - offset as _centre's copy would convert, without that
    copy); a sparse X by _centre."""
    if sp.issparse(X):
        return (*_centre(X, X_offset), None)
    rounded = _rounded_offset(X_offset)
    return X, rounded, rounded


def _centre(X, X_offset):
    """(centred copy of X, the offset subtracted) for the unregularized intercept, which is then y_offset minus
    offset.coef_. Dense: X - mean. Sparse: the engine has no implicit centring yet, so a dense centred copy is made
    when it has at most 2^27 entries; beyond that the sparse X is used uncentred (only y is centred) with a warning:
    the intercept is then the y mean minus X_mean.coef_, and coefficients differ from scikit-learn's when the
    feature means are not zero.
    The mean subtracted is rounded to float32 first: at a tol of _hetglm.float64_tol or looser the solvers train on
    the float32 values, and a mean that differs in its last double bits (weights 2 against a repeated sample: another
    order of summation) would otherwise round some centred values to another float32 and move the coefficients by
    ~1e-7 (scikit-learn's check_sample_weight_equivalence); the residual mean, below float32 resolution, is as small
    as that rounding. (Below that tol they train on the float64 values, for which the rounded offset is as exact.)"""
    rounded = _rounded_offset(X_offset)
    if not sp.issparse(X):
        return X - rounded, rounded
    if X.shape[0] * X.shape[1] <= _MAX_DENSE_ENTRIES:
        return X.toarray() - rounded, rounded
    warnings.warn("hetglm: sparse X too large to centre densely; fitting on uncentred X with centred y "
                  "(coefficients differ from scikit-learn's unless the feature means are zero)", UserWarning)
    return X, np.asarray(X_offset, dtype=np.float64)


class Ridge(_BaseRegressor):
    """Ridge regression (scikit-learn's ``Ridge``): minimises ||y - Xw||^2 + alpha ||w||^2 (with sample
    weights), i.e. the engine's (1/n) sum_i c_i (x_i.w - y_i)^2/2 + lambda ||w||^2/2 with lambda = alpha/n.
    Trained by primal CD over features or SDCA over samples (formulation="auto": whichever trial runs on a row
    sample predict to be less work, docs/formulation.md), certified by its duality gap.
    ``fit_intercept=True``: unregularized intercept by centring. ``alpha``: a positive number, or one per target
    (shape (n_targets,)) as scikit-learn's. Attributes: coef_ (n_features,), intercept_ (float), n_iter_
    (epochs), duality_gap_, primal_objective_, training_history_, lambda_, n_features_in_."""

    _engine_model_name = "ridge"
    _multi_target = True

    def __init__(self, alpha=1.0, fit_intercept=True, tol=1e-4, max_iter=1000, random_state=None, verbose=0,
                 warm_start=False, n_jobs=None, device="cpu", accel_memory=None, formulation="auto", copy_X=True,
                 solver="auto", positive=False):
        self.alpha = alpha
        self.warm_start = warm_start
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.device = device
        self.accel_memory = accel_memory
        self.formulation = formulation
        self.copy_X = copy_X
        self.solver = solver
        self.positive = positive

    _SKLEARN_SOLVERS = ("auto", "svd", "cholesky", "lsqr", "sparse_cg", "sag", "saga", "lbfgs")

    def _check_common(self):
        super()._check_common()
        # scikit-learn's Ridge parameters: copy_X (X is never modified) and solver (every one of scikit-learn's
        # solvers reaches the same optimum; the engine's certified solve replaces it) are accepted, positive=True
        # is refused.
        if self.positive:
            raise ValueError("positive=True is not supported by the hetglm engine")
        if self.solver not in self._SKLEARN_SOLVERS:
            raise ValueError(f"solver must be one of scikit-learn's Ridge solvers ({', '.join(self._SKLEARN_SOLVERS)}; "
                             f"the engine trains with its own, see formulation), got {self.solver!r}")

    def _lambdas(self, n, n_targets):
        """lambda = alpha / n per target: alpha a number, or (as scikit-learn's Ridge) one value per target, shape
        (n_targets,) (a single value for any number of targets)."""
        if np.ndim(self.alpha) == 0:  # (a 0-d array too, as scikit-learn takes it)
            alpha = self.alpha.item() if isinstance(self.alpha, np.ndarray) else self.alpha
            return [_check_alpha(alpha) / n] * n_targets
        a = np.asarray(self.alpha, dtype=object).ravel()
        if a.size not in (1, n_targets):
            raise ValueError(f"Number of targets and number of penalties do not correspond: {a.size} != {n_targets}")
        out = []
        for k, v in enumerate(a):
            if not _positive_finite(v):
                raise ValueError(f"alpha[{k}] must be a positive finite number, got {v!r}")
            out.append(float(v) / n)
        return out * n_targets if a.size == 1 else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class ElasticNet(_BaseRegressor):
    """Elastic net (scikit-learn's ``ElasticNet``): minimises (1/(2n)) ||y - Xw||^2 + alpha l1_ratio ||w||_1 +
    (alpha/2)(1 - l1_ratio) ||w||^2, i.e. the engine's objective with lambda = alpha, eta = l1_ratio. Trained
    by primal coordinate descent; the L1 part's conjugate is Lipschitzed (|w_j| <= B) so the duality gap is
    finite (Duenner et al., ICML 2016). Sample weights are rescaled to sum to n (as scikit-learn).
    ``fit_intercept=True``: unregularized intercept by centring. y (n_samples,) or (n_samples, n_targets) (one
    independent fit per target, as scikit-learn's). Attributes as :class:`Ridge`, and dual_gap_ (scikit-learn's
    name for duality_gap_, in X's float dtype)."""

    _engine_model_name = "elastic-net"
    _rescale_weights = True
    _by_feature = True
    _multi_target = True  # y (n, k): one independent fit per target, as scikit-learn's ElasticNet and Lasso

    def __init__(self, alpha=1.0, *, l1_ratio=0.5, fit_intercept=True, precompute=False, max_iter=1000, copy_X=True,
                 tol=1e-4, warm_start=False, positive=False, random_state=None, selection="cyclic", verbose=0,
                 n_jobs=None, device="cpu", accel_memory=None):
        self.alpha = alpha
        self.warm_start = warm_start
        self.l1_ratio = l1_ratio
        self.precompute = precompute
        self.copy_X = copy_X
        self.positive = positive
        self.selection = selection
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.device = device
        self.accel_memory = accel_memory

    def _lambdas(self, n, n_targets):
        return [_check_alpha(self.alpha)] * n_targets  # (one target: the engine's lambda is alpha)

    def _l1_ratio(self):
        return _check_l1_ratio(self.l1_ratio)

    def _check_common(self):
        super()._check_common()
        _check_cd_params(self)

    def fit(self, X, y, sample_weight=None, check_input=True):
        """As _BaseRegressor.fit; ``check_input`` is scikit-learn's and ignored here: X and y are always checked
        (their conversion to the engine's matrix needs it)."""
        return super().fit(X, y, sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags


class Lasso(ElasticNet):
    """Lasso (scikit-learn's ``Lasso``): minimises (1/(2n)) ||y - Xw||^2 + alpha ||w||_1 (lambda = alpha),
    by primal coordinate descent with a certified (Lipschitzed) duality gap. Attributes as :class:`Ridge`."""

    _engine_model_name = "lasso"

    def __init__(self, alpha=1.0, *, fit_intercept=True, precompute=False, copy_X=True, max_iter=1000, tol=1e-4,
                 warm_start=False, positive=False, random_state=None, selection="cyclic", verbose=0, n_jobs=None,
                 device="cpu", accel_memory=None):
        self.alpha = alpha
        self.warm_start = warm_start
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.copy_X = copy_X
        self.positive = positive
        self.selection = selection
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.device = device
        self.accel_memory = accel_memory

    def _l1_ratio(self):
        return 1.0


# The engine's option errors name the command line's flags ("--accel-memory: cannot parse 'lots' ..."); through the
# Python API they name the parameter instead (the rest of the message is the engine's).
_FLAG_PARAMS = {"--tol": "tol", "--max-epochs": "max_iter", "--threads": "n_jobs", "--accel-memory": "accel_memory",
                "--l1-ratio": "l1_ratio", "--formulation": "formulation", "--penalty": "penalty",
                "--lambda": "the regularization (lambda = 1/(C n), or alpha)", "--seed": "random_state", "-c": "C"}


def _engine_call(fn, *args):
    """fn(*args) with an engine ValueError that starts with a command-line flag re-raised in the parameter's name."""
    try:
        return fn(*args)
    except ValueError as e:
        text = str(e)
        flag = text.split(":", 1)[0]
        if flag in _FLAG_PARAMS:
            raise ValueError(_FLAG_PARAMS[flag] + text[len(flag):]) from None
        raise


def _file_name(path, who):
    """path as the str the engine opens: str, bytes (decoded as the file system does) or os.PathLike; anything else
    (an open file object, in particular, whose str() would become a file name) is a TypeError."""
    try:
        name = os.fspath(path)
    except TypeError:
        raise TypeError(f"{who}: path must be a file name (str, bytes or os.PathLike), got "
                        f"{type(path).__name__}") from None
    return os.fsdecode(name)


def load_model(path):
    """Read a model file written by ``hetglm train`` or ``est.save_model`` and return a fitted estimator
    (LogisticRegression, LinearSVC, Ridge, Lasso or ElasticNet) that predicts as the CLI does, with the settings a refit
    needs to train the same model (LinearSVC's penalty, LogisticRegression's multi_class='ovr' for one-vs-rest
    weights). The trained lambda is
    ``lambda_``; Lasso and ElasticNet get ``alpha = lambda_`` back, classifiers ``C = 1 / (lambda_ n)`` and Ridge
    ``alpha = lambda_ n`` (docs/conventions.md, "Objective and scaling"), n being the ``n_samples`` the file records.
    A file without that line (written before it existed) gives the classifiers and Ridge their default C / alpha:
    set them before refitting such a model. A regression model that the CLI trained with ``-B b`` regularizes its
    bias weight, which the Python regressors (scikit-learn's unregularized intercept) do not: it predicts as the
    CLI, and a refit fits the unregularized intercept (housing_scale ridge ``-B 1``: 1.6e-3 apart). A classifier's
    ``classes_`` are the file's labels as float64 (the file
    stores numbers: string or bool labels saved by ``save_model`` come back as their numeric values), ascending as
    scikit-learn's, with their weight columns.
    ``path``: a file name (str, bytes or os.PathLike). Raises ValueError for a malformed file
    (``FILE:LINE:COLUMN: ...``) or a model without a Python estimator (huber: ``hetglm predict`` reads it),
    OSError / FileNotFoundError, TypeError for a path that is not a file name."""
    name = _file_name(path, "load_model")
    d = _hetglm.load_model(name)
    w = np.asarray(d["w"])
    nf = int(d["nr_feature"])
    model = d["model"]
    if model not in ("logistic", "svm", "squared-hinge", "multinomial", "ridge", "lasso", "elastic-net"):
        raise ValueError(f"{name}: model {model!r} has no Python estimator here (hetglm predict reads the file)")
    lam = float(d["lambda"])
    n_samples = int(d.get("n_samples", 0))
    if model in ("logistic", "svm", "squared-hinge", "multinomial"):
        if model in ("logistic", "multinomial"):
            # scikit-learn 1.9's spelling, consistent for a refit: penalty 'auto' and the l1_ratio of the file's penalty
            est = LogisticRegression(l1_ratio={"l2": 0.0, "l1": 1.0}.get(d["penalty"], float(d["l1_ratio"])))
            est.multinomial_ = model == "multinomial"
            if model == "logistic" and len(d["labels"]) > 2:  # one-vs-rest weights: a refit trains them again
                est.multi_class = "ovr"
        else:
            est = LinearSVC(loss="hinge" if model == "svm" else "squared_hinge",
                            penalty="l1" if d["penalty"] == "l1" else "l2")
        labels = np.asarray(d["labels"])
        if len(labels) == 2:  # file: positive class first; scikit-learn: classes_[1] positive
            est.classes_ = labels[::-1].copy()
            if est.classes_[1] < est.classes_[0]:  # a file from another tool with the negative class larger
                est.classes_ = labels.copy()
                w = -w
        else:  # ascending, as scikit-learn's classes_ (np.unique), the weight columns with them: a file lists its
            # labels in the order they were trained (LIBLINEAR: first seen; save_model of string labels '10', '2',
            # '9': their string order), and scikit-learn's metrics read predict_proba's columns as sorted classes
            order = np.argsort(labels, kind="stable")
            est.classes_ = labels[order].copy()
            w = w[:, order]
        est.coef_ = np.ascontiguousarray(w[:nf].T)
        est.fit_intercept = d["bias"] >= 0
        est.intercept_ = d["bias"] * w[nf].copy() if d["bias"] >= 0 else np.zeros(w.shape[1])
        if d["bias"] >= 0:
            est.intercept_scaling = float(d["bias"])
        if model in ("logistic", "multinomial"):  # (the multinomial model: one solve, shape (1,) as after fit)
            est.n_iter_ = np.zeros(1 if model == "multinomial" else w.shape[1], dtype=np.int32)
        else:
            est.n_iter_ = 0
        if n_samples > 0:  # 15 significant digits undo the rounding of lambda = 1/(C n): C = 4 comes back as 4.0
            est.C = float(f"{1.0 / (lam * n_samples):.15g}")
    else:
        est = {"ridge": Ridge, "lasso": Lasso, "elastic-net": ElasticNet}[model]()
        est.coef_ = w[:nf, 0].copy()
        est.fit_intercept = d["bias"] >= 0
        est.intercept_ = float(d["bias"] * w[nf, 0]) if d["bias"] >= 0 else 0.0
        if model == "elastic-net":
            est.l1_ratio = float(d["l1_ratio"])
        if model in ("lasso", "elastic-net"):
            est.alpha = lam  # lambda = alpha for these two (no sample count involved)
        elif n_samples > 0:
            est.alpha = float(f"{lam * n_samples:.15g}")  # Ridge: lambda = alpha / n (15 digits, as C above)
        est.n_iter_ = 0
    est.duality_gap_ = float(np.sum(d["gap"]))
    est.primal_objective_ = float(np.sum(d["primal"]))
    est.training_history_ = []
    est.lambda_ = lam
    est.engine_model_ = d
    est.n_features_in_ = nf
    return est
