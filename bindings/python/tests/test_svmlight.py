# SPDX-License-Identifier: Apache-2.0
"""hetglm.load_svmlight_file / dump_svmlight_file against scikit-learn's functions of the same names."""
import gzip
import io

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file as sk_dump
from sklearn.datasets import load_svmlight_file as sk_load

import hetglm


def data_files(data_dir):
    return sorted(p for p in data_dir.iterdir() if p.is_file() and p.name != "SOURCES.md")


def assert_same(ours, theirs):
    assert len(ours) == len(theirs)
    X1, X2 = sp.csr_matrix(ours[0]), sp.csr_matrix(theirs[0])
    assert X1.shape == X2.shape
    assert X1.dtype == X2.dtype
    np.testing.assert_array_equal(X1.indptr, X2.indptr)
    np.testing.assert_array_equal(X1.indices, X2.indices)
    np.testing.assert_array_equal(X1.data, X2.data)  # exact: values are parsed in double
    for a, b in zip(ours[1:], theirs[1:]):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


def test_every_bundled_file_equals_sklearn(data_dir):
    files = data_files(data_dir)
    assert len(files) >= 10
    for f in files:
        assert_same(hetglm.load_svmlight_file(f), sk_load(str(f)))


@pytest.mark.parametrize("kwargs", [dict(zero_based=True), dict(zero_based=False), dict(n_features=200),
                                    dict(dtype=np.float32), dict(query_id=True)])
def test_options_equal_sklearn(data_dir, kwargs):
    f = data_dir / "heart_scale"
    assert_same(hetglm.load_svmlight_file(f, **kwargs), sk_load(str(f), **kwargs))


def test_query_id_and_zero_based_auto(tmp_path):
    text = b"# comment\n3 qid:1 0:1.5 4:-2e-3\n1 qid:1 2:0.1   # trailing\n\n2 qid:7\n-1 qid:2 1:1e300 3:7\n"
    p = tmp_path / "q.svm"
    p.write_bytes(text)
    for zb in ("auto", True):
        assert_same(hetglm.load_svmlight_file(p, query_id=True, zero_based=zb),
                    sk_load(str(p), query_id=True, zero_based=zb))
    X, y, q = hetglm.load_svmlight_file(p, query_id=True)
    np.testing.assert_array_equal(q, [1, 1, 7, 2])
    assert X.shape == (4, 5)


def test_files_objects_gzip_and_multiple(tmp_path, data_dir):
    src = (data_dir / "iris.scale").read_bytes()
    gz = tmp_path / "iris.scale.gz"
    gz.write_bytes(gzip.compress(src))
    assert_same(hetglm.load_svmlight_file(gz), sk_load(str(gz)))
    assert_same(hetglm.load_svmlight_file(io.BytesIO(src)), sk_load(io.BytesIO(src)))
    # Compressed files without the suffix, by their magic bytes, as the command line reads gzip whatever the name
    # (it failed with "control character '\x1f'"; scikit-learn goes by the suffix alone).
    plain = hetglm.load_svmlight_file(data_dir / "iris.scale")
    (tmp_path / "iris_gz").write_bytes(gzip.compress(src))
    (tmp_path / "iris_bz").write_bytes(__import__("bz2").compress(src))
    assert_same(hetglm.load_svmlight_file(tmp_path / "iris_gz"), plain)
    assert_same(hetglm.load_svmlight_file(str(tmp_path / "iris_bz")), plain)
    ours = hetglm.load_svmlight_files([data_dir / "dna.scale", data_dir / "dna.scale.t"])
    theirs = __import__("sklearn.datasets", fromlist=["x"]).load_svmlight_files(
        [str(data_dir / "dna.scale"), str(data_dir / "dna.scale.t")])
    assert_same(ours[:2], theirs[:2])
    assert_same(ours[2:], theirs[2:])


def test_unsorted_indices_are_sorted_where_sklearn_rejects(tmp_path):
    p = tmp_path / "u.svm"
    p.write_bytes(b"1 3:3 1:1 2:2\n")
    X, y = hetglm.load_svmlight_file(p)
    np.testing.assert_array_equal(X.toarray(), [[1, 2, 3]])
    with pytest.raises(ValueError):
        sk_load(str(p))


def test_errors(tmp_path):
    p = tmp_path / "bad.svm"
    p.write_bytes(b"1 1:1\n1 2:x\n")
    with pytest.raises(ValueError, match=r"bad.svm:2:5: invalid feature value 'x'"):
        hetglm.load_svmlight_file(p)
    p.write_bytes(b"1 1:1 1:2\n")
    with pytest.raises(ValueError, match="duplicate feature index '1'"):
        hetglm.load_svmlight_file(p)
    with pytest.raises(FileNotFoundError, match="cannot open"):
        hetglm.load_svmlight_file(tmp_path / "missing.svm")
    p.write_bytes(b"1 5:1\n")
    with pytest.raises(ValueError, match="n_features was set to 2, but input file contains 5 features"):
        hetglm.load_svmlight_file(p, n_features=2)


def test_values_the_cli_refuses_are_refused_with_its_message(tmp_path):
    # A value beyond double range came back as whatever the parser's variable held (4.7e-310 one run, 1.0 the
    # next), and nan / inf were returned: the CLI refuses all of them, and so does load_svmlight_file, with the
    # CLI's FILE:LINE:COLUMN message. A signed index '-0' likewise.
    p = tmp_path / "v.svm"
    for text, msg in [(b"1 1:1e400 2:5\n", "v.svm:1:5: feature value '1e400' out of float range"),
                      (b"1 1:1\n-1 1:-1e309\n", "v.svm:2:6: feature value '-1e309' out of float range"),
                      (b"1 1:nan 2:3\n", "v.svm:1:5: non-finite feature value 'nan'"),
                      (b"1 1:1\n" * 200 + b"1 1:inf\n", "v.svm:201:5: non-finite feature value 'inf'"),
                      (b"1 -0:1\n", "v.svm:1:3: negative feature index '-0'")]:
        p.write_bytes(text)
        with pytest.raises(ValueError) as e:
            hetglm.load_svmlight_file(p)
        assert str(e.value) == f"{p}:{msg[len('v.svm:'):]}"
    # A truncated or false .gz keeps the decompressor's exception type (as scikit-learn) and names the file.
    import gzip
    z = tmp_path / "t.svm.gz"
    z.write_bytes(gzip.compress(b"1 1:1\n" * 1000)[:-20])
    with pytest.raises(EOFError, match=r"^cannot read '.*t\.svm\.gz': Compressed file ended"):
        hetglm.load_svmlight_file(z)
    z.write_bytes(b"+1 1:1\n")
    with pytest.raises(gzip.BadGzipFile, match=r"^cannot read '.*t\.svm\.gz': Not a gzipped file"):
        hetglm.load_svmlight_file(z)
    # Underflow is 0, as in Python's float() and the CLI; a UTF-8 byte-order mark is skipped, as by the CLI.
    p.write_bytes(b"\xef\xbb\xbf1 1:1e-400 2:1\n-1 1:1\n")
    X, y = hetglm.load_svmlight_file(p)
    assert X.toarray().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    assert y.tolist() == [1.0, -1.0]


@pytest.mark.parametrize("zero_based", [True, False])
def test_dump_round_trips_and_sklearn_reads_it(tmp_path, data_dir, zero_based):
    X, y = sk_load(str(data_dir / "housing_scale"))
    q = np.arange(X.shape[0]) // 10
    ours, theirs = tmp_path / "ours.svm", tmp_path / "theirs.svm"
    hetglm.dump_svmlight_file(X, y, ours, zero_based=zero_based, query_id=q, comment="made by\nhetglm")
    sk_dump(X, y, str(theirs), zero_based=zero_based, query_id=q)
    a = sk_load(str(ours), zero_based=zero_based, query_id=True)
    b = sk_load(str(theirs), zero_based=zero_based, query_id=True)
    assert_same(a, b)
    assert_same(hetglm.load_svmlight_file(ours, zero_based=zero_based, query_id=True), b)
    assert ours.read_text().startswith("# made by\n# hetglm\n")
    dense = tmp_path / "dense.svm"
    hetglm.dump_svmlight_file(X.toarray(), y, dense)
    assert_same(hetglm.load_svmlight_file(dense, zero_based=True), sk_load(str(dense), zero_based=True))


@pytest.mark.parametrize("n_features", [-5, 0, 3.5, True, "13"])
def test_n_features_must_be_a_positive_integer(data_dir, n_features):
    # A bad-input trial: -5 said "n_features was set to -5, but input file contains 13 features", 3.5 failed later
    # in the matrix's shape (scikit-learn refuses both as an InvalidParameterError, a ValueError).
    with pytest.raises(ValueError) as e:
        hetglm.load_svmlight_file(f"{data_dir}/heart_scale", n_features=n_features)
    assert str(e.value) == f"n_features must be None or an integer >= 1, got {n_features!r}"
    X, _ = hetglm.load_svmlight_file(f"{data_dir}/heart_scale", n_features=np.int64(20))
    assert X.shape == (270, 20)


def test_streams_and_compressed_files_are_read_within_the_memory_left(tmp_path, monkeypatch):
    # A bad-input trial: `yes "1 1:1" |` into load_svmlight_file("/dev/stdin") grew until the allocator gave up (or
    # the kernel killed the process); a .gz and a file object are now read in chunks, at most what the process could
    # still allocate when the read began (the engine's memory_limit), here patched to 1 MB.
    from hetglm import _svmlight
    text = b"1 1:1 2:0.5\n" * 200000  # 2.4 MB
    with gzip.open(tmp_path / "big.gz", "wb") as f:
        f.write(text)
    monkeypatch.setattr(_svmlight._hetglm, "memory_limit", lambda: (1000000, "MemAvailable"))
    with pytest.raises(MemoryError) as e:
        hetglm.load_svmlight_file(str(tmp_path / "big.gz"))
    assert str(e.value) == f"'{tmp_path / 'big.gz'}': more than 1.0 MB of text, all this process can still allocate " \
                           f"(MemAvailable)"
    with pytest.raises(MemoryError):
        hetglm.load_svmlight_file(io.BytesIO(text))
    X, y = hetglm.load_svmlight_file(io.BytesIO(text[:120000]))  # within the bound: read whole
    assert X.shape == (10000, 2)
