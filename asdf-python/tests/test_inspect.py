"""info(), search(), validate(), warnings, help texts."""

from __future__ import annotations

import pydoc

import numpy as np
import pytest

import asdf_rs


@pytest.fixture
def sample(tmp_path):
    p = tmp_path / "s.asdf"
    asdf_rs.write(
        p,
        {
            "meta": {"instrument": {"name": "NIRCam", "detector": "NRCA1"}, "exposure": 30.0},
            "sci": {"data": np.zeros((4, 5), np.float32), "err": np.ones(3)},
        },
    )
    return p


def test_info_outlines_the_tree(sample):
    with asdf_rs.open(sample) as f:
        text = f.info()
        short = f.info(max_rows=3)
    assert "instrument: dict (2 keys)" in text
    assert "name: str: 'NIRCam'" in text
    assert "data: Array (4, 5) float32" in text
    assert "exposure: float: 30.0" in text
    assert len(short.splitlines()) == 4 and "more than 3 nodes" in short


def test_search_by_key_type_and_value(sample):
    with asdf_rs.open(sample) as f:
        arrays = [p for p, _ in f.search(type=asdf_rs.Array)]
        assert arrays == ["/sci/data", "/sci/err"] == f.arrays()
        names = [p for p, _ in f.search(key="name")]
        assert names[0] == "/asdf_library/name" and names[-1] == "/meta/instrument/name"
        assert all(p.endswith("/name") for p in names)
        assert [p for p, _ in f.search(value="NRCA1")] == ["/meta/instrument/detector"]
        hits = list(f.search(key=lambda k: isinstance(k, str) and k.startswith("exp"), value=lambda v: v > 10))
        assert hits == [("/meta/exposure", 30.0)]
        assert list(f.search(key="nothing-like-this")) == []


def test_validate(sample, tmp_path):
    with asdf_rs.open(sample) as f:
        f.validate()
    bad = tmp_path / "bad.asdf"
    bad.write_bytes(
        b"#ASDF 1.0.0\n#ASDF_STANDARD 1.5.0\n%YAML 1.1\n%TAG ! tag:stsci.edu:asdf/\n--- !core/asdf-1.1.0\n"
        b"a: !core/ndarray-1.0.0 {data: [1, 2], datatype: no_such_type, shape: [2]}\n...\n"
    )
    with asdf_rs.open(bad) as f:
        with pytest.raises(asdf_rs.AsdfError, match="/a"):
            f.validate()
        with pytest.raises(asdf_rs.AsdfError, match="no_such_type"):
            f["a"]


def test_help_texts_are_useful():
    assert "validate_checksums" in pydoc.render_doc(asdf_rs.open)
    assert "compression" in pydoc.render_doc(asdf_rs.write)
    assert "zero-copy" in asdf_rs.AsdfFile.read.__doc__
    for name in asdf_rs.__all__:
        assert getattr(asdf_rs, name).__doc__, name


def test_standard_version_and_repr(sample):
    f = asdf_rs.open(sample)
    assert f.standard_version == "1.6.0"
    assert "open" in repr(f)
    f.close()
    assert "closed" in repr(f)
