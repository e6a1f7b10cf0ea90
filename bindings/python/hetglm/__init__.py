# SPDX-License-Identifier: Apache-2.0
"""hetglm: generalized linear models by stochastic coordinate descent with a certified duality gap.

scikit-learn estimators (same names, parameters and objective scaling as scikit-learn's):
:class:`LogisticRegression`, :class:`LinearSVC`, :class:`Ridge`, :class:`Lasso`, :class:`ElasticNet`;
regularization paths, warm-started and certified at every point: :func:`lasso_path`, :func:`enet_path`,
:func:`logistic_regression_path`, and on top of them :class:`LassoCV`, :class:`ElasticNetCV`,
:class:`LogisticRegressionCV`, :class:`RidgeCV`;
svmlight files: :func:`load_svmlight_file`, :func:`load_svmlight_files`, :func:`dump_svmlight_file`;
model files shared with the ``hetglm`` command line: ``est.save_model(path)``, :func:`load_model`;
:func:`plot_training_history` (matplotlib, optional). See docs/python.md.
"""
from . import _hetglm
from ._estimators import ElasticNet, Lasso, LinearSVC, LogisticRegression, Ridge, load_model
from ._path import (ElasticNetCV, LassoCV, LogisticRegressionCV, RidgeCV, enet_path, lasso_path,
                    logistic_regression_path)
from ._plot import plot_training_history
from ._svmlight import dump_svmlight_file, load_svmlight_file, load_svmlight_files

__version__ = _hetglm.__version__
backends = tuple(_hetglm.backends.replace(",", " ").split())  # "cpu fpga-sim" -> ("cpu", "fpga-sim")

__all__ = ["LogisticRegression", "LinearSVC", "Ridge", "Lasso", "ElasticNet", "load_model",
           "lasso_path", "enet_path", "logistic_regression_path", "LassoCV", "ElasticNetCV", "LogisticRegressionCV", "RidgeCV",
           "load_svmlight_file", "load_svmlight_files", "dump_svmlight_file", "plot_training_history",
           "__version__", "backends"]
