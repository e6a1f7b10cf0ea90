# SPDX-License-Identifier: Apache-2.0
"""scikit-learn's own estimator checks on every hetglm estimator."""
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import hetglm

# Checks that cannot pass by design, with the reason (scikit-learn >= 1.6 `expected_failed_checks`).
_WEIGHT_EQUIVALENCE = (
    "the fit is certified to the relative duality gap tol on float32 data (the engine's storage), so refits on "
    "repeated vs weighted samples agree to about tol, not to the check's rtol=1e-7")


def expected_failed_checks(est):
    if isinstance(est, hetglm.ElasticNet):  # Lasso too: primal CD reaches the check's rtol on its data
        return {}
    if isinstance(est, hetglm.LogisticRegression):  # the primal Newton solver converges quadratically: it does too
        return {}
    return {
        "check_sample_weight_equivalence_on_dense_data": _WEIGHT_EQUIVALENCE,
        "check_sample_weight_equivalence_on_sparse_data": _WEIGHT_EQUIVALENCE,
    }


# Some checks use deliberately ill-conditioned data (features around 100, no scaling) on which SDCA needs more
# than max_iter epochs to reach tol: the ConvergenceWarning there is expected and the checks still pass.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

ESTIMATORS = [
    hetglm.LogisticRegression(),
    hetglm.LogisticRegression(C=0.5, class_weight="balanced"),
    hetglm.LinearSVC(),
    hetglm.LinearSVC(loss="hinge", max_iter=5000),
    hetglm.Ridge(),
    hetglm.Lasso(alpha=0.1),
    hetglm.ElasticNet(alpha=0.1),
]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
