# SPDX-License-Identifier: Apache-2.0
"""Training-history plot (matplotlib is an optional dependency, imported when called)."""
from __future__ import annotations

__all__ = ["plot_training_history"]


def plot_training_history(estimator, ax=None):
    """Plot a fitted estimator's certificate per epoch: the duality gap P - D (log scale, left) and the primal
    objective P(w) (right) against wall time in seconds since the start of the solve. One-vs-rest models draw
    one line per weight column, multi-target regressors one per target. Returns the (gap_axis, primal_axis)
    pair. Raises ImportError when matplotlib is missing and ValueError when the estimator has no training
    history (not fitted, or loaded from a file).
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("plot_training_history needs matplotlib: pip install matplotlib") from e
    history = getattr(estimator, "training_history_", None)
    if not history:
        raise ValueError("plot_training_history: the estimator has no training history (fit it first)")
    if ax is None:
        _, ax = plt.subplots()
    ax2 = ax.twinx()
    # One line per weight column (one-vs-rest: "column"; a multi-target regressor's fits: "target", whose lines
    # were drawn as one before).
    key = "target" if any("target" in h for h in history) else "column"
    columns = sorted({h.get(key, 0) for h in history})
    for k in columns:
        rows = [h for h in history if h.get(key, 0) == k]
        t = [h["seconds"] for h in rows]
        suffix = f" ({key} {k})" if len(columns) > 1 else ""
        ax.semilogy(t, [max(h["gap"], 1e-300) for h in rows], marker=".", label="duality gap" + suffix)
        ax2.plot(t, [h["primal"] for h in rows], linestyle="--", label="primal" + suffix)
    ax.set_xlabel("seconds")
    ax.set_ylabel("duality gap P - D")
    ax2.set_ylabel("primal objective P(w)")
    ax.set_title(type(estimator).__name__)
    ax.legend(loc="upper right")
    return ax, ax2
