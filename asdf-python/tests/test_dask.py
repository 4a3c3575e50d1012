"""Dask: chunks follow the file; a 2-process LocalCluster sums a chunked file like NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import asdf_rs

da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def chunked_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("dask") / "chunked.asdf"
    rng = np.random.default_rng(3)
    a = rng.standard_normal((400, 300))
    asdf_rs.write(
        p,
        {
            "chunked": asdf_rs.Chunked(a, chunks=(100, 150)),
            "raw": a,
            "zstd_block": np.arange(1000.0),
        },
        compression=None,
    )
    return p, a


def test_chunks_follow_the_file(chunked_file):
    p, a = chunked_file
    with asdf_rs.open(p) as f:
        c = f.to_dask("chunked")
        assert c.chunks == ((100,) * 4, (150, 150))
        assert np.array_equal(c.compute(scheduler="sync"), a)
        r = f.to_dask("/raw", chunks=64)
        assert r.chunks[0] == (64,) * 6 + (16,) and r.chunks[1] == (300,)
        assert np.array_equal(r[10:200:3].compute(scheduler="threads"), a[10:200:3])
        whole = f.to_dask("raw")
        assert whole.chunks == ((400,), (300,))  # 960 kB: one 64 MiB slab


def test_local_cluster_with_two_processes_sums_a_chunked_file(chunked_file):
    distributed = pytest.importorskip("distributed")
    p, a = chunked_file
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        with asdf_rs.open(p) as f, distributed.get_task_stream(client) as stream:
            c = f.to_dask("chunked")
            total = client.compute(c.sum()).result()
            col = client.compute(f.to_dask("raw", chunks=50).mean(axis=0)).result()
        # The reads ran in both worker processes (8 + 8 chunk tasks for 2 workers).
        assert len({t["worker"] for t in stream.data}) == 2
    assert np.isclose(total, a.sum(), rtol=1e-12, atol=1e-9)
    assert np.allclose(col, a.mean(axis=0))
