# SPDX-License-Identifier: Apache-2.0
"""svmlight / libsvm files, compatible with :func:`sklearn.datasets.load_svmlight_file` and
:func:`sklearn.datasets.dump_svmlight_file`, parsed by the C++ reader (in parallel chunks).

Differences from scikit-learn, on purpose: unsorted feature indices within a line are sorted (scikit-learn
rejects them); duplicate indices are an error as in scikit-learn. ``multilabel=True`` and
``offset``/``length`` are not supported (``NotImplementedError``).
"""
from __future__ import annotations

import bz2
import gzip
import numbers
import os

import numpy as np
import scipy.sparse as sp

from . import _hetglm

__all__ = ["load_svmlight_file", "load_svmlight_files", "dump_svmlight_file"]

try:  # scikit-learn >= 1.8 returns csr_array or csr_matrix by its sparse-interface setting
    from sklearn.utils._sparse import _align_api_if_sparse as _align
except Exception:  # pragma: no cover - older scikit-learn
    def _align(X):
        return X


def _shift(zero_based):
    if zero_based == "auto":
        return -1
    if zero_based is True:
        return 0
    if zero_based is False:
        return 1
    raise ValueError(f"zero_based must be True, False or 'auto', got {zero_based!r}")


def _opener(path):
    """gzip.open or bz2.open for a compressed file, else None: by the suffix (.gz, .bz2, as scikit-learn), and for a
    regular file without one by its magic bytes (1f 8b, "BZh"), as the command line reads gzip whatever the name."""
    if path.endswith(".gz"):
        return gzip.open
    if path.endswith(".bz2"):
        return bz2.open
    if not os.path.isfile(path):  # a pipe or device is not peeked at (its first bytes would be consumed)
        return None
    try:
        with open(path, "rb") as fh:
            head = fh.read(3)
    except OSError:
        return None  # the engine's reader names the file and the error
    if head[:2] == b"\x1f\x8b":
        return gzip.open
    if head == b"BZh":
        return bz2.open
    return None


def _read_bounded(fh, name):
    """All of fh's bytes, in chunks, at most what this process could still allocate when the read began (the engine's
    memory_limit: cgroup limits and MemAvailable; no bound when unknown): a stream without end or a compression bomb
    raised MemoryError only when the allocator gave up, or got the process killed. str chunks are UTF-8 encoded."""
    limit, source = _hetglm.memory_limit()
    chunks, total = [], 0
    while True:
        b = fh.read(1 << 24)
        if not b:
            break
        if isinstance(b, str):
            b = b.encode()
        chunks.append(b)
        total += len(b)
        if limit and total > limit:
            raise MemoryError(f"'{name}': more than {_hetglm.format_bytes(limit)} of text, all this process can still "
                              f"allocate ({source})")
    return b"".join(chunks)


def _parse(f, shift):
    """Parse one file: a path (plain, gzip or bzip2: _opener), an open file descriptor number or a binary file
    object."""
    if hasattr(f, "read"):
        name = str(getattr(f, "name", "<file>"))
        return _hetglm.parse_svmlight_bytes(_read_bounded(f, name), name, shift)
    if isinstance(f, (int, np.integer)):
        name = f"<fd {int(f)}>"
        with os.fdopen(os.dup(int(f)), "rb") as fh:
            return _hetglm.parse_svmlight_bytes(_read_bounded(fh, name), name, shift)
    path = os.fspath(f)
    if isinstance(path, bytes):
        path = path.decode()
    opener = _opener(path)
    if opener is not None:
        try:
            with opener(path, "rb") as fh:
                data = _read_bounded(fh, path)
        except (EOFError, OSError) as e:
            if getattr(e, "errno", None) is not None:  # the file system's errors (missing file ...) name the file
                raise
            # The decompressor's own exception type (EOFError, gzip.BadGzipFile, bz2's OSError), as scikit-learn's
            # reader raises, with the file named: a truncated .gz said only "Compressed file ended before the
            # end-of-stream marker was reached".
            raise type(e)(f"cannot read '{path}': {e}") from e
        return _hetglm.parse_svmlight_bytes(data, path, shift)
    return _hetglm.parse_svmlight_file(path, shift)


def _check_unsupported(multilabel, offset, length):
    if multilabel:
        raise NotImplementedError("hetglm.load_svmlight_file: multilabel=True is not supported")
    if offset != 0 or length > 0:
        raise NotImplementedError("hetglm.load_svmlight_file: offset and length are not supported")


def load_svmlight_files(files, *, n_features=None, dtype=np.float64, multilabel=False, zero_based="auto",
                        query_id=False, offset=0, length=-1):
    """Load several svmlight files with one feature space (as scikit-learn's function of the same name).

    Returns ``[X1, y1, X2, y2, ...]`` (``X`` CSR, shape (n_samples, n_features), ``dtype``; ``y`` float64 of
    shape (n_samples,)), with each file's ``query_id`` array (int64) after its ``y`` when ``query_id=True``.
    ``zero_based='auto'`` treats the files as one-based unless some file has index 0 (or no features).
    Raises ValueError on malformed text (message ``FILE:LINE:COLUMN: ...``), OSError/FileNotFoundError.
    """
    _check_unsupported(multilabel, offset, length)
    if n_features is not None and (isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral)
                                   or n_features < 1):
        # (scikit-learn's InvalidParameterError is a ValueError with this meaning; it said "n_features was set to
        # -5, but input file contains 13 features", and 3.5 gave a matrix of 3.5 columns' shape error later)
        raise ValueError(f"n_features must be None or an integer >= 1, got {n_features!r}")
    if isinstance(files, (str, bytes, os.PathLike, int)) or hasattr(files, "read"):
        files = [files]
    if zero_based == "auto" and len(files) == 1:
        raw = [_parse(files[0], -1)]  # the reader decides and shifts in the same pass
    else:
        raw = [_parse(f, 0 if zero_based == "auto" else _shift(zero_based)) for f in files]
    if zero_based == "auto" and len(files) > 1 and all(r["min_index"] > 0 for r in raw):
        for r in raw:
            r["indices"] -= 1
            r["n_features"] -= 1
    n_f = max(max(r["n_features"], 1) for r in raw)
    if n_features is None:
        n_features = n_f
    elif n_features < n_f:
        raise ValueError(f"n_features was set to {n_features}, but input file contains {n_f} features")
    result = []
    for r in raw:
        shape = (r["indptr"].shape[0] - 1, n_features)
        X = sp.csr_matrix((r["data"], r["indices"], r["indptr"]), shape=shape, copy=False)
        X.has_sorted_indices = True  # the reader sorts every row
        if np.dtype(dtype) != np.float64:
            X = X.astype(dtype)
        result += [_align(X), r["y"]]
        if query_id:
            result.append(r["qid"])
    return result


def load_svmlight_file(f, *, n_features=None, dtype=np.float64, multilabel=False, zero_based="auto",
                       query_id=False, offset=0, length=-1):
    """Load an svmlight / libsvm file into a CSR matrix, as :func:`sklearn.datasets.load_svmlight_file`.

    Parameters mirror scikit-learn's. ``f``: path (gzip and bzip2 decompressed: by the ``.gz``/``.bz2`` suffix,
    or by the magic bytes of a regular file without it), file descriptor number or binary file object. Returns
    ``(X, y)`` or ``(X, y, query_id)``: ``X`` CSR of shape (n_samples, n_features) in ``dtype`` (float64 by
    default), ``y`` float64 (n_samples,), ``query_id`` int64.
    The values are read in double precision (the training engine itself stores float32; see docs/python.md).
    """
    return tuple(load_svmlight_files([f], n_features=n_features, dtype=dtype, multilabel=multilabel,
                                     zero_based=zero_based, query_id=query_id, offset=offset, length=length))


_FLOAT_MAX = float(np.finfo(np.float32).max)


def _check_dump_values(Xs, y):
    """Refuse what the readers refuse (as scikit-learn refuses NaN and infinity): a NaN or infinite label or value,
    and a value beyond float32 range, which the engine's reader (the command line's) rejects."""
    if y.dtype.kind in "fc":
        bad = np.flatnonzero(~np.isfinite(y))
        if bad.size:
            raise ValueError(f"dump_svmlight_file: y[{int(bad[0])}] = {float(y[bad[0]])!r} is not a finite number (the "
                             f"svmlight readers refuse NaN and infinite labels)")
    d = Xs.data
    bad = np.flatnonzero(~np.isfinite(d) | (np.abs(d) > _FLOAT_MAX))
    if bad.size:
        k = int(bad[0])
        row = int(np.searchsorted(Xs.indptr, k, side="right") - 1)
        where = f"X[{row}, {int(Xs.indices[k])}] = {float(d[k])!r}"
        if not np.isfinite(d[k]):
            raise ValueError(f"dump_svmlight_file: {where} is not a finite number (the svmlight readers refuse NaN "
                             f"and infinity)")
        raise ValueError(f"dump_svmlight_file: {where} is out of float range (the hetglm reader refuses feature "
                         f"values beyond {_FLOAT_MAX:g} in magnitude: the engine stores float32)")


def dump_svmlight_file(X, y, f, *, zero_based=True, comment=None, query_id=None, multilabel=False):
    """Write ``X`` (dense or sparse, (n_samples, n_features)) and ``y`` ((n_samples,)) in svmlight format, as
    :func:`sklearn.datasets.dump_svmlight_file` (zero-based by default, like scikit-learn). Values and labels
    are written as the shortest text that reads back to the same float64. ``f``: path (written atomically)
    or binary file object. ``query_id``: (n_samples,) integers written as ``qid:``."""
    if multilabel:
        raise NotImplementedError("hetglm.dump_svmlight_file: multilabel=True is not supported")
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"expected y of shape (n_samples,), got {y.shape}")
    if comment is not None:
        if isinstance(comment, bytes):
            comment = comment.decode("utf-8")
        if "\0" in comment:
            raise ValueError("comment string contains NUL byte")
    Xs = sp.csr_matrix(X, dtype=np.float64)
    Xs.sum_duplicates()
    Xs.sort_indices()
    if Xs.shape[0] != y.shape[0]:
        raise ValueError(f"X.shape[0] and y.shape[0] should be the same, got {Xs.shape[0]} and {y.shape[0]} instead.")
    _check_dump_values(Xs, y)
    qid = None
    if query_id is not None:
        qid = np.ascontiguousarray(query_id, dtype=np.int64)
        if qid.shape[0] != y.shape[0]:
            raise ValueError(f"expected query_id of shape ({y.shape[0]},), got {qid.shape}")
    indptr = np.ascontiguousarray(Xs.indptr)
    indices = np.ascontiguousarray(Xs.indices, dtype=indptr.dtype if indptr.dtype == np.int64 else np.int32)
    if indptr.dtype != np.int64:
        indptr = indptr.astype(np.int32, copy=False)
    text = _hetglm.format_svmlight(indptr, indices, np.ascontiguousarray(Xs.data), np.ascontiguousarray(y, dtype=np.float64),
                                   qid, bool(zero_based), comment or "")
    if hasattr(f, "write"):
        f.write(text)
    else:
        _hetglm.write_file_atomic(os.fspath(f), text)
