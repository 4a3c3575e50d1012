"""Shared helpers: the reference corpus and a value comparison with Python asdf 6.0.0."""

from __future__ import annotations

import datetime
import os
import pathlib

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
CORPUS = pathlib.Path(
    os.environ.get("ASDF_CORPUS", HERE.parent.parent.parent / "shared" / "corpus")
).resolve()
REFERENCE = CORPUS / "asdf-standard" / "reference_files"


def reference_files() -> list:
    """Every ``.asdf`` file of the ASDF Standard's reference files (all versions)."""
    files = sorted(REFERENCE.glob("*/*.asdf"))
    return [f for f in files if "generate" not in f.parts]


@pytest.fixture(scope="session")
def corpus_files() -> list:
    files = reference_files()
    if not files:
        pytest.fail(f"no reference files under {REFERENCE} (set ASDF_CORPUS)")
    return files


def plain(x, np_array=np.asarray):
    """A value with every library-specific type replaced by a plain one (dict, list, scalar,
    numpy array), for comparing asdf_rs trees with Python asdf trees."""
    import asdf_rs

    if isinstance(x, asdf_rs.TaggedScalar):
        return plain(x.value)
    if type(x).__name__ == "IntegerType":  # Python asdf's core/integer (documented as int)
        return int(x._value)
    if isinstance(x, dict):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    for t in (bool, str, bytes, int, float, complex):  # subclasses (TaggedStr, np.float64) too
        if isinstance(x, t):
            return t(x)
    if isinstance(x, datetime.date) or x is None:
        return x
    if isinstance(x, asdf_rs.Array) or hasattr(x, "__array__"):
        return np_array(x)
    if hasattr(x, "items"):  # Python asdf's dict-like node types
        return {k: plain(v) for k, v in x.items()}
    return x


def assert_same(a, b, where: str = ""):
    """Deep equality of two plain values; arrays by value (NaN equal to NaN), masks included."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asanyarray(a), np.asanyarray(b)
        assert a.shape == b.shape, f"{where}: shape {a.shape} != {b.shape}"
        assert isinstance(a, np.ma.MaskedArray) == isinstance(b, np.ma.MaskedArray), (
            f"{where}: masked {type(a).__name__} vs {type(b).__name__}"
        )
        if isinstance(a, np.ma.MaskedArray):
            assert np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b)), f"{where}: masks"
            a, b = a.filled(0) if a.dtype.kind != "V" else a.data, b.filled(0) if b.dtype.kind != "V" else b.data
        assert a.dtype.kind == b.dtype.kind, f"{where}: dtype {a.dtype} != {b.dtype}"
        if a.dtype.kind in "fc":
            assert np.array_equal(a, b, equal_nan=True), f"{where}: values differ"
        elif a.dtype.kind == "V":
            assert a.dtype.names == b.dtype.names, f"{where}: fields {a.dtype.names} != {b.dtype.names}"
            for name in a.dtype.names:
                assert_same(np.asarray(a[name]), np.asarray(b[name]), f"{where}.{name}")
        else:
            assert np.array_equal(a, b), f"{where}: values differ"
        return
    if isinstance(a, dict):
        assert isinstance(b, dict), f"{where}: dict vs {type(b).__name__}"
        assert list(a) == list(b) or set(a) == set(b), f"{where}: keys {list(a)} != {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}/{k}")
        return
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), f"{where}: {a!r} != {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}/{i}")
        return
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return
    assert type(a) is type(b) or {type(a), type(b)} <= {int, float}, (
        f"{where}: {type(a).__name__} {a!r} vs {type(b).__name__} {b!r}"
    )
    assert a == b, f"{where}: {a!r} != {b!r}"
