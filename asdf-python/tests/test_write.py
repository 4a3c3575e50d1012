"""Writing with asdf_rs: files Python asdf reads with warnings as errors, and round trips."""

from __future__ import annotations

import datetime
import os
import warnings

import numpy as np
import pytest

import asdf_rs
from conftest import assert_same, plain


def tree():
    return {
        "name": "test",
        "n": 42,
        "big": 2**70 + 3,
        "neg": -(2**65),
        "x": 1.5,
        "z": 2 - 3j,
        "ok": True,
        "nothing": None,
        "when": datetime.datetime(2024, 5, 6, 7, 8, 9, 123456),
        "list": [1, "two", [3.0]],
        "nested": {"a": {"b": np.arange(12, dtype=np.int64).reshape(3, 4)}},
        "f32": np.linspace(0, 1, 11, dtype=np.float32),
        "big_endian": np.arange(5, dtype=">i4"),
        "fortran": np.asfortranarray(np.arange(6.0).reshape(2, 3)),
        "strided": np.arange(20.0)[::3],
        "u": np.array(["α", "βγ"]),
        "s": np.array([b"ab", b"c"]),
        "masked": np.ma.MaskedArray(np.arange(4.0), mask=[1, 0, 0, 1]),
        "rec": np.array([(1, 2.0)], dtype=[("a", "<i2"), ("b", "<f8")]),
        "np_scalar": np.float64(2.5),
        "np_int": np.int32(7),
        "empty": np.zeros((0, 3)),
        "zero_d": np.array(3.5),
    }


@pytest.mark.parametrize("compression", [None, "zlib", "bzp2", "lz4", "zstd"])
def test_python_asdf_reads_our_files_without_warnings(tmp_path, compression):
    import asdf

    p = tmp_path / "ours.asdf"
    t = tree()
    asdf_rs.write(p, t, compression=compression)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with asdf.open(p, lazy_load=False, memmap=False) as af:
            theirs = plain(af.tree)
    expected = plain(t)
    for key in expected:
        assert_same(theirs[key], expected[key], key)
    with asdf_rs.open(p) as f:
        ours = plain(f.tree)
    for key in expected:
        assert_same(ours[key], expected[key], key)


def test_tagged_values_round_trip(tmp_path):
    p = tmp_path / "tagged.asdf"
    t = {
        "d": asdf_rs.Tagged("tag:example.org:thing-1.0.0", {"a": 1}),
        "l": asdf_rs.Tagged("tag:example.org:list-1.0.0", [1, 2]),
        "s": asdf_rs.Tagged("tag:example.org:str-1.0.0", "text"),
    }
    asdf_rs.write(p, dict(t, n=asdf_rs.Tagged("tag:example.org:num-1.0.0", 5)))
    with asdf_rs.open(p) as f:
        back = f.tree
    for k, v in t.items():
        assert isinstance(back[k], asdf_rs.Tagged) and back[k].tag == v.tag and back[k] == v
    # A tagged number is written as its text; like Python asdf, reading keeps the text.
    assert isinstance(back["n"], asdf_rs.TaggedStr) and back["n"] == "5"


def test_write_is_crash_safe_and_errors_leave_the_old_file(tmp_path):
    p = tmp_path / "keep.asdf"
    asdf_rs.write(p, {"a": np.arange(3)})
    before = p.read_bytes()
    with pytest.raises(TypeError, match="object"):
        asdf_rs.write(p, {"bad": object()})
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["keep.asdf"]
    cyclic: dict = {}
    cyclic["self"] = cyclic
    with pytest.raises(ValueError, match="deeper"):
        asdf_rs.write(p, cyclic)
    with pytest.raises(ValueError, match="compression"):
        asdf_rs.write(p, {"a": np.arange(3)}, compression="nope")
    assert p.read_bytes() == before


def test_unsynced_writes_are_still_atomic(tmp_path):
    import asdf

    p = tmp_path / "scratch.asdf"
    a = np.linspace(0, 1, 1000)
    asdf_rs.write(p, {"a": a}, compression="zstd", sync=False)
    with asdf.open(p) as af:
        assert np.array_equal(af["a"], a)
    # Replacing a file (synced regardless) and failing midway behave as with sync=True.
    asdf_rs.write(p, {"a": a[::-1]}, sync=False)
    before = p.read_bytes()
    with pytest.raises(TypeError, match="object"):
        asdf_rs.write(p, {"bad": object()}, sync=False)
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["scratch.asdf"]
    with asdf_rs.open(p) as f:
        assert np.array_equal(f["a"], a[::-1])


def test_lazy_arrays_can_be_written(tmp_path):
    p, q = tmp_path / "a.asdf", tmp_path / "b.asdf"
    a = np.arange(50, dtype=np.uint16)
    asdf_rs.write(p, {"a": a})
    with asdf_rs.open(p) as f:
        asdf_rs.write(q, {"copy": f.tree["a"], "meta": f.tree["asdf_library"]})
    with asdf_rs.open(q) as g:
        assert np.array_equal(g["copy"], a)
        assert g.tree["meta"]["name"] == "asdf-rust"


def test_string_arrays_keep_their_declared_width(tmp_path):
    import asdf

    p = tmp_path / "strings.asdf"
    t = {"u": np.array([""], dtype="<U30"), "s": np.array([b"ab", b"c"], dtype="S12")}
    asdf_rs.write(p, t)
    with asdf.open(p, lazy_load=False, memmap=False) as af:
        for k, a in t.items():
            assert np.asarray(af.tree[k]).dtype == a.dtype, k
            assert np.array_equal(np.asarray(af.tree[k]), a), k


@pytest.mark.parametrize("compression", [None, "zstd"])
def test_arrays_are_written_from_their_own_memory(tmp_path, compression):
    """C-contiguous arrays go to their blocks without a copy: a view into the middle of a
    larger array, a read-only array over bytes, and an array large enough (72 MB, over the
    64 MiB at which a zstd block is hashed and written while it is compressed). Python asdf
    reads what was written and agrees with every checksum."""
    import asdf

    base = np.cumsum(np.arange(9_000_000, dtype=np.float64) % 7)
    kept = base.copy()
    t = {
        "tail": base[7:],
        "grid": base.reshape(3000, 3000)[10:20],
        "ro": np.frombuffer(b"abcdefgh" * 4, dtype="<u8"),
        "temp": np.arange(5, dtype=">i4").astype("<i4"),
    }
    p = tmp_path / "own.asdf"
    asdf_rs.write(p, t, compression=compression)
    np.testing.assert_array_equal(base, kept)
    with asdf.open(p, lazy_load=False, memmap=False, validate_checksums=True) as af:
        for key, value in t.items():
            np.testing.assert_array_equal(af[key], value, err_msg=key)
            if compression is not None and key == "tail":
                assert af.get_array_compression(af[key]) == compression
