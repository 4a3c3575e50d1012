"""Files opened by URL: an S3 server on loopback (moto, started and stopped here) serves files
written by asdf_rs and by Python asdf; asdf_rs reads them by ranged requests, slices read only
what covers them, and a 2-process dask cluster sums a remote file like NumPy."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request

import numpy as np
import pytest

import asdf_rs

boto3 = pytest.importorskip("boto3")
pytest.importorskip("moto")

BUCKET = "data"
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    """``(endpoint, client)`` of a moto S3 server on a free loopback port, with bucket
    ``data``; the server is killed when the module's tests are done."""
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(endpoint, timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("moto server did not start")
                time.sleep(0.1)
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            **CREDENTIALS,
        )
        client.create_bucket(Bucket=BUCKET)
        yield endpoint, client
    finally:
        server.kill()
        server.wait()


def _options(endpoint: str) -> dict:
    return {"endpoint_url": endpoint, "region": "us-east-1", "storage_options": CREDENTIALS}


@pytest.fixture(scope="module")
def remote_file(s3, tmp_path_factory):
    """A file with an uncompressed 4 MiB array, a chunked one, a zstd one, a masked one and a
    big integer, written by asdf_rs and uploaded; returns ``(url, local path, arrays)``."""
    endpoint, client = s3
    rng = np.random.default_rng(7)
    arrays = {
        "raw": rng.standard_normal((1024, 512)),
        "chunked": rng.standard_normal((300, 200)).astype(np.float32),
        "packed": np.arange(100_000, dtype=np.int64),
    }
    tree = {
        "raw": arrays["raw"],
        "chunked": asdf_rs.Chunked(arrays["chunked"], chunks=(100, 100)),
        "masked": np.ma.MaskedArray([1.0, 2.0, 3.0], mask=[False, True, False]),
        "big": 2**100 + 7,
        "meta": {"name": "remote", "n": 3},
    }
    path = tmp_path_factory.mktemp("remote") / "file.asdf"
    asdf_rs.write(path, tree)
    client.upload_file(str(path), BUCKET, "file.asdf")
    packed = tmp_path_factory.mktemp("remote") / "packed.asdf"
    asdf_rs.write(packed, {"packed": arrays["packed"]}, compression="zstd")
    client.upload_file(str(packed), BUCKET, "packed.asdf")
    return f"s3://{BUCKET}/file.asdf", path, arrays


def test_remote_file_reads_like_the_local_one(s3, remote_file):
    endpoint, _ = s3
    url, path, arrays = remote_file
    with asdf_rs.open(url, **_options(endpoint)) as f, asdf_rs.open(path) as local:
        assert f.remote and not local.remote
        assert f.path == url
        assert f.tree["meta"] == {"name": "remote", "n": 3}
        assert f.tree["big"] == 2**100 + 7
        assert f.arrays() == local.arrays()
        assert np.array_equal(f["raw"], arrays["raw"])
        assert np.array_equal(f["/chunked"], arrays["chunked"])
        m = f["masked"]
        assert isinstance(m, np.ma.MaskedArray)
        assert m.mask.tolist() == [False, True, False] and m[0] == 1.0 and m[2] == 3.0
        # Decoded copies (writeable), where the local file gives read-only views of its map.
        assert f["raw"].flags.writeable and not local["raw"].flags.writeable
        f.validate()
    with asdf_rs.open(f"s3://{BUCKET}/packed.asdf", **_options(endpoint)) as f:
        assert np.array_equal(f["packed"], arrays["packed"])


def test_slices_of_a_remote_array_read_only_what_covers_them(s3, remote_file):
    endpoint, _ = s3
    url, _, arrays = remote_file
    with asdf_rs.open(url, **_options(endpoint)) as f:
        _, opened = f.traffic
        raw = f.array("raw")
        assert raw.shape == (1024, 512) and raw.dtype == np.float64
        part = raw[100:110, 5:9]
        assert np.array_equal(part, arrays["raw"][100:110, 5:9])
        _, after = f.traffic
        # Ten rows of 4 KiB, not the 4 MiB array (plus at most one block header).
        assert after - opened < 256 << 10, (opened, after)
        window = f.array("chunked")[150:160, 90:110]
        assert np.array_equal(window, arrays["chunked"][150:160, 90:110])


def test_remote_errors_name_the_url(s3):
    endpoint, _ = s3
    url = f"s3://{BUCKET}/missing.asdf"
    with pytest.raises((FileNotFoundError, asdf_rs.AsdfError)) as e:
        asdf_rs.open(url, **_options(endpoint))
    assert "missing.asdf" in str(e.value)


def test_file_urls_open_local_paths(remote_file):
    _, path, arrays = remote_file
    with asdf_rs.open(path.as_uri()) as f:
        assert not f.remote
        assert np.array_equal(f["raw"], arrays["raw"])


def test_dask_over_a_remote_file(s3, remote_file):
    da = pytest.importorskip("dask.array")
    endpoint, _ = s3
    url, _, arrays = remote_file
    with asdf_rs.open(url, **_options(endpoint)) as f:
        raw = f.to_dask("raw", chunks=128)
        assert raw.chunks[0] == (128,) * 8
        assert np.array_equal(raw[300:700:7].compute(scheduler="threads"), arrays["raw"][300:700:7])
        chunked = f.to_dask("chunked")
        assert chunked.chunks == ((100,) * 3, (100, 100))
        assert isinstance(chunked, da.Array)
        assert np.array_equal(chunked.compute(scheduler="sync"), arrays["chunked"])


def test_local_cluster_with_two_processes_sums_a_remote_file(s3, remote_file):
    distributed = pytest.importorskip("distributed")
    endpoint, _ = s3
    url, _, arrays = remote_file
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster, distributed.Client(cluster) as client:
        with asdf_rs.open(url, **_options(endpoint)) as f, distributed.get_task_stream(client) as stream:
            total = client.compute(f.to_dask("raw", chunks=64).sum()).result()
            col = client.compute(f.to_dask("chunked").mean(axis=0)).result()
        # Each worker process opened the URL itself and read its own pieces.
        assert len({t["worker"] for t in stream.data}) == 2
    assert np.isclose(total, arrays["raw"].sum(), rtol=1e-12, atol=1e-9)
    # float32 sums in another order: equal to rounding.
    assert np.allclose(col, arrays["chunked"].mean(axis=0), rtol=1e-4, atol=1e-6)
