"""Awkward arrays: ``ak.Array`` written into ASDF and read back, awkward0 ``.awkd`` files
written by awkward0 itself read as ``ak.Array``, and awkward 2 nodes readable by Python asdf."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import asdf_rs

ak = pytest.importorskip("awkward")

EVENTS = [
    {"x": 1.5, "hits": [1, 2, 3], "name": "a", "maybe": None},
    {"x": -2.0, "hits": [], "name": "bé", "maybe": 4.0},
    {"x": 3.25, "hits": [7], "name": "", "maybe": 5.5},
]


def test_ak_arrays_round_trip_through_asdf(tmp_path):
    events = ak.Array(EVENTS)
    jagged = ak.Array([[1.1, 2.2], [], [3.3, 4.4, 5.5]])
    p = tmp_path / "events.asdf"
    asdf_rs.write(p, {"events": events, "jagged": jagged, "plain": np.arange(3)}, compression="zlib")
    with asdf_rs.open(p) as f:
        back = f["events"]
        assert isinstance(back, ak.Array)
        assert back.to_list() == EVENTS
        assert str(back.type) == str(events.type)
        assert f["/jagged"].to_list() == jagged.to_list()
        assert ak.sum(f.awkward("jagged")) == pytest.approx(16.5)
        assert f["plain"].tolist() == [0, 1, 2]


def test_python_asdf_reads_the_awkward2_node_with_ak_from_buffers(tmp_path):
    asdf = pytest.importorskip("asdf")
    p = tmp_path / "events.asdf"
    asdf_rs.write(p, {"events": ak.Array(EVENTS)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # our tag is unknown to Python asdf
        with asdf.open(p) as af:
            node = af.tree["events"]
            buffers = {k: np.asarray(v) for k, v in node["buffers"].items()}
            back = ak.from_buffers(dict(node["form"]), int(node["length"]), buffers)
    assert back.to_list() == EVENTS


def test_awkd_files_written_by_awkward0(tmp_path):
    awkward0 = pytest.importorskip("awkward0")
    one = tmp_path / "one.awkd"
    jagged = awkward0.fromiter([[1.0, 2.0], [], [3.0]])
    awkward0.save(str(one), jagged, mode="w")
    back = asdf_rs.read_awkd(one)
    assert isinstance(back, ak.Array)
    assert back.to_list() == [[1.0, 2.0], [], [3.0]]

    several = tmp_path / "several.awkd"
    table = awkward0.fromiter([{"a": 1, "b": [1.5]}, {"a": 2, "b": []}])
    awkward0.save(str(several), {"jagged": jagged, "table": table}, mode="w")
    arrays = asdf_rs.read_awkd(several)
    assert sorted(arrays) == ["jagged", "table"]
    assert arrays["table"].to_list() == [{"a": 1, "b": [1.5]}, {"a": 2, "b": []}]
    assert asdf_rs.read_awkd(several, "jagged").to_list() == [[1.0, 2.0], [], [3.0]]


def test_bad_awkd_files_raise_asdf_error(tmp_path):
    bad = tmp_path / "bad.awkd"
    bad.write_bytes(b"PK\x03\x04 not a zip archive at all")
    with pytest.raises(asdf_rs.AsdfError) as e:
        asdf_rs.read_awkd(bad)
    assert "bad.awkd" in str(e.value)
