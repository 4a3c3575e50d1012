"""Zero-copy views, lifetimes, decoded arrays, lazy arrays, masks, strings and records."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import asdf_rs


@pytest.fixture
def raw_file(tmp_path):
    p = tmp_path / "raw.asdf"
    a = np.arange(100_000, dtype=np.float64).reshape(1000, 100)
    asdf_rs.write(p, {"a": a, "small": np.arange(10, dtype=np.int16), "b": np.ones(7, dtype=">f4")})
    return p, a


def test_uncompressed_arrays_are_read_only_views_of_the_map(raw_file):
    p, a = raw_file
    with asdf_rs.open(p) as f:
        x = f["a"]
        y = f["/a"]
    assert np.array_equal(x, a)
    assert not x.flags.writeable and not x.flags.owndata
    # Two reads share the same bytes: both are views of the one memory map.
    assert np.shares_memory(x, y)
    assert isinstance(x.base, asdf_rs._native.FileBuffer)
    assert x.base is y.base
    with pytest.raises(ValueError):
        x[0, 0] = 1.0


def test_views_are_views_of_the_file_bytes(raw_file):
    p, a = raw_file
    with asdf_rs.open(p, validate_checksums=False) as f:
        x = f["a"]
    raw = np.memmap(p, mode="r", dtype=np.uint8)
    offset = bytes(raw).find(a.tobytes()[:64])
    assert offset > 0
    assert np.array_equal(x.view(np.uint8).ravel(), raw[offset : offset + a.nbytes])


def test_big_endian_and_compressed_arrays_are_decoded_copies(tmp_path):
    import asdf

    p = tmp_path / "big.asdf"
    asdf.AsdfFile({"b": np.arange(7, dtype=">f4")}).write_to(p)
    with asdf_rs.open(p) as f:
        b = f["b"]
    # Decoded into this machine's byte order, in memory NumPy owns through its base.
    assert b.dtype == np.dtype("=f4") and b.flags.writeable and np.array_equal(b, np.arange(7))
    assert not isinstance(b.base, asdf_rs._native.FileBuffer)
    q = tmp_path / "z.asdf"
    a = np.linspace(0, 1, 10_000)
    asdf_rs.write(q, {"a": a}, compression="zstd")
    with asdf_rs.open(q) as f:
        z = f["a"]
    assert np.array_equal(z, a) and z.flags.writeable


def test_arrays_outlive_the_file_object(raw_file):
    p, a = raw_file
    f = asdf_rs.open(p)
    x = f["a"]
    lazy = f.array("a")
    ref = weakref.ref(f)
    f.close()
    with pytest.raises(ValueError, match="closed"):
        lazy.read()
    del f, lazy
    gc.collect()
    assert ref() is None
    # The view keeps the map alive after the file object is gone.
    assert float(x.sum()) == float(a.sum())
    assert x[999, 99] == a[999, 99]
    y = x[::-1, 5]
    del x
    gc.collect()
    assert y[0] == a[999, 5]  # a view of a view keeps it too (base chain)


def test_closed_file_refuses_reads(raw_file):
    p, _ = raw_file
    f = asdf_rs.open(p)
    f.close()
    assert f.closed
    with pytest.raises(ValueError, match="closed"):
        f["a"]


def test_lazy_arrays(raw_file):
    p, a = raw_file
    with asdf_rs.open(p) as f:
        lazy = f.tree["a"]
        assert isinstance(lazy, asdf_rs.Array)
        assert lazy.shape == (1000, 100) and lazy.dtype == np.float64 and lazy.ndim == 2
        assert np.array_equal(np.asarray(lazy), a)
        assert np.array_equal(lazy[10:20, 3], a[10:20, 3])
        assert lazy.pointer == "/a"


def test_chunked_arrays_read_regions(tmp_path):
    a = np.arange(60 * 40, dtype=np.int32).reshape(60, 40)
    p = tmp_path / "c.asdf"
    asdf_rs.write(p, {"c": asdf_rs.Chunked(a, chunks=(16, 10))}, compression="zlib")
    with asdf_rs.open(p) as f:
        lazy = f.array("c")
        assert lazy.chunked and lazy.shape == (60, 40) and lazy.dtype == np.int32
        assert np.array_equal(lazy[5:30, 12:13], a[5:30, 12:13])
        assert np.array_equal(lazy[59, ...], a[59, ...])
        assert np.array_equal(lazy[-3:], a[-3:])
        assert np.array_equal(lazy[::7, 1], a[::7, 1])  # steps: read whole, then index
        assert np.array_equal(f["c"], a)
        with pytest.raises(IndexError):
            lazy[60]


def test_masked_string_and_structured_arrays_match_python_asdf(tmp_path):
    import asdf

    masked = np.ma.MaskedArray(np.arange(6.0), mask=[0, 1, 0, 0, 1, 0])
    rec = np.array([(1, 2.5, b"ab"), (3, -1.0, b"xyz")], dtype=[("i", "<i4"), ("f", ">f8"), ("s", "S3")])
    tree = {
        "m": masked,
        "u": np.array(["α", "βγ", ""]),
        "s": np.array([b"ab", b"", b"xyz"]),
        "r": rec,
        "f16": np.arange(5, dtype=np.float16),
        "c": np.array([1 + 2j, 3 - 4j], dtype=np.complex64),
        "bool": np.array([True, False, True]),
    }
    p = tmp_path / "kinds.asdf"
    asdf.AsdfFile(tree).write_to(p)
    with asdf_rs.open(p) as f:
        m = f["m"]
        assert isinstance(m, np.ma.MaskedArray)
        assert np.array_equal(m.mask, masked.mask) and np.array_equal(m.compressed(), masked.compressed())
        assert f["u"].tolist() == ["α", "βγ", ""]
        assert f["s"].tolist() == [b"ab", b"", b"xyz"]
        r = f["r"]
        assert r.dtype.names == ("i", "f", "s")
        assert r["i"].tolist() == [1, 3] and r["f"].tolist() == [2.5, -1.0] and r["s"].tolist() == [b"ab", b"xyz"]
        for k in ("f16", "c", "bool"):
            assert f[k].dtype == tree[k].dtype and np.array_equal(f[k], tree[k]), k


def test_inline_arrays(tmp_path):
    import asdf

    p = tmp_path / "inline.asdf"
    af = asdf.AsdfFile({"a": np.arange(6).reshape(2, 3)})
    af.write_to(p, all_array_storage="inline")
    with asdf_rs.open(p) as f:
        assert np.array_equal(f["a"], np.arange(6).reshape(2, 3))
        assert f.array("a").shape == (2, 3)


def test_threads_read_one_file_concurrently(tmp_path):
    """Reads release the GIL: threads decode arrays of one open file at the same time."""
    from concurrent.futures import ThreadPoolExecutor

    arrays = {f"a{i}": np.random.default_rng(i).standard_normal(50_000) for i in range(8)}
    p = tmp_path / "many.asdf"
    asdf_rs.write(p, arrays, compression="zstd")
    with asdf_rs.open(p) as f, ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda k: f[k], list(arrays) * 4))
    for k, a in zip(list(arrays) * 4, got):
        assert np.array_equal(a, arrays[k])
