"""Reading: trees and arrays equal Python asdf 6.0.0's on every reference file; errors."""

from __future__ import annotations

import datetime
import warnings

import numpy as np
import pytest

import asdf_rs
from conftest import assert_same, plain, reference_files


def python_asdf_tree(path):
    import asdf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with asdf.open(path, lazy_load=False, memmap=False) as af:
            return plain(af.tree)


@pytest.mark.parametrize(
    "path", reference_files(), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_reference_file_matches_python_asdf(path):
    with asdf_rs.open(path) as f:
        ours = plain(f.tree)
        arrays = {p: f[p] for p in f.arrays()}
    theirs = python_asdf_tree(path)
    assert_same(ours, theirs, path.name)
    assert arrays or not any(isinstance(v, np.ndarray) for v in ours.values())


def test_every_reference_file_was_found(corpus_files):
    # 7 versions of the Standard, 16 files each.
    assert len(corpus_files) >= 100


def test_pointer_forms_and_non_array_nodes(corpus_files):
    path = next(p for p in corpus_files if p.name == "basic.asdf")
    with asdf_rs.open(path) as f:
        a = f["/data"]
        b = f["data"]
        assert isinstance(a, np.ndarray)
        assert np.array_equal(a, b)
        assert f["/asdf_library/name"] == "asdf"
        assert f[""]["data"].shape == a.shape
        with pytest.raises(KeyError, match="nothing in the tree"):
            f["/no/such/node"]


def test_scalars_types(corpus_files):
    path = next(p for p in corpus_files if p.name == "scalars.asdf" and p.parent.name == "1.6.0")
    with asdf_rs.open(path) as f:
        t = f.tree
    assert isinstance(t, asdf_rs.Tagged) and isinstance(t, dict)
    assert t.tag == "tag:stsci.edu:asdf/core/asdf-1.1.0"
    assert t["asdf_library"].tag == "tag:stsci.edu:asdf/core/software-1.0.0"
    assert (t["float"], t["int"], t["string"]) == (3.14, 42, "foo")


def test_timestamps_binary_bigints(tmp_path):
    p = tmp_path / "scalars.asdf"
    p.write_bytes(
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
        b"day: 2001-12-14\nwhen: 2001-12-14 21:59:43.10 -5\nutc: 2001-12-15T02:59:43.1Z\n"
        b"naive: 2002-12-14 21:59:43.25\nraw: !!binary aGVsbG8=\nhuge: 123456789012345678901234567890\n"
        b"neg: -9223372036854775809\nz: !core/complex-1.0.0 1+2j\nunknown: !<tag:example.org:x-1.0.0> 5\n...\n"
    )
    with asdf_rs.open(p) as f:
        t = f.tree
    utc = datetime.timezone.utc
    assert t["day"] == datetime.date(2001, 12, 14)
    assert t["when"] == datetime.datetime(2001, 12, 15, 2, 59, 43, 100000, tzinfo=utc)
    assert t["when"].utcoffset() == datetime.timedelta(hours=-5)
    assert t["utc"] == datetime.datetime(2001, 12, 15, 2, 59, 43, 100000, tzinfo=utc)
    assert t["naive"] == datetime.datetime(2002, 12, 14, 21, 59, 43, 250000)
    assert t["raw"] == b"hello"
    assert t["huge"] == 123456789012345678901234567890
    assert t["neg"] == -9223372036854775809
    assert t["z"] == 1 + 2j
    # An unknown tag on a scalar keeps its text, as in Python asdf (a tagged string).
    assert isinstance(t["unknown"], asdf_rs.TaggedStr) and t["unknown"] == "5"
    assert t["unknown"].tag == "tag:example.org:x-1.0.0"
    # Python asdf agrees on every value.
    theirs = python_asdf_tree(p)
    for key in ("day", "when", "utc", "naive", "raw", "huge", "neg", "z", "unknown"):
        assert_same(plain(t[key]), theirs[key], key)


def test_shared_nodes_are_one_object(corpus_files):
    path = next(p for p in corpus_files if p.name == "anchor.asdf")
    with asdf_rs.open(path) as f:
        t = f.tree
    seen = {}
    for v in t.values():
        if isinstance(v, (dict, list)):
            seen.setdefault(id(v), 0)
            seen[id(v)] += 1
    assert any(n > 1 for n in seen.values())


def test_missing_file_and_bad_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.asdf"):
        asdf_rs.open(tmp_path / "nope.asdf")
    bad = tmp_path / "bad.asdf"
    bad.write_bytes(b"not an asdf file at all")
    with pytest.raises(asdf_rs.AsdfError, match="bad.asdf.*not an ASDF file"):
        asdf_rs.open(bad)
    assert issubclass(asdf_rs.AsdfError, ValueError)


def test_truncated_and_corrupted_files_raise(tmp_path, corpus_files):
    """Every prefix of a compressed file, and files with flipped bytes, give exceptions or
    values, never a crash of the interpreter."""
    src = next(p for p in corpus_files if p.name == "compressed.asdf" and p.parent.name == "1.6.0")
    data = src.read_bytes()
    rng = np.random.default_rng(7)
    cases = [data[:n] for n in range(0, len(data), max(1, len(data) // 60))]
    for _ in range(60):
        b = bytearray(data)
        for i in rng.integers(0, len(b), 4):
            b[i] ^= 0xFF
        cases.append(bytes(b))
    errors = 0
    for i, case in enumerate(cases):
        p = tmp_path / f"case{i}.asdf"
        p.write_bytes(case)
        try:
            with asdf_rs.open(p, untrusted=True) as f:
                f.tree
                for ptr in f.arrays():
                    f[ptr]
        except (asdf_rs.AsdfError, KeyError, TypeError, ValueError):
            errors += 1
    assert errors > 0


def test_checksum_mismatch_is_an_error(tmp_path):
    a = np.arange(1000, dtype="<f8")
    p = tmp_path / "c.asdf"
    asdf_rs.write(p, {"a": a})
    data = bytearray(p.read_bytes())
    at = bytes(data).rfind(a[500:501].tobytes())
    data[at] ^= 1
    p.write_bytes(bytes(data))
    with asdf_rs.open(p) as f:
        with pytest.raises(asdf_rs.AsdfError, match="(?i)checksum"):
            f["a"]
    with asdf_rs.open(p, validate_checksums=False) as f:
        assert f["a"][500] != 500.0


def test_hostile_headers_give_errors_not_allocations(tmp_path):
    """Shapes and offsets that the file's bytes cannot back are refused before allocating."""
    head = b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
    cases = {
        "huge_shape": b"a: !core/ndarray-1.0.0 {source: 0, datatype: float64, shape: [100000000000000]}\n",
        "no_block": b"a: !core/ndarray-1.0.0 {source: 3, datatype: int8, shape: [4]}\n",
        "bad_strides": b"a: !core/ndarray-1.0.0 {source: 0, datatype: int8, shape: [4], strides: [1000000]}\n",
        "deep_alias": b"a: &x [1]\nb: *x\nc: !core/ndarray-1.0.0 {data: [[1, 2], [3]], datatype: int8, shape: [2, 2]}\n",
    }
    for name, body in cases.items():
        p = tmp_path / f"{name}.asdf"
        p.write_bytes(head + body + b"...\n")
        ptr = "/c" if name == "deep_alias" else "/a"
        with asdf_rs.open(p, untrusted=True) as f:
            f.tree
            with pytest.raises(asdf_rs.AsdfError, match=ptr[1:]):
                f[ptr]
