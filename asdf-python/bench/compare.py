"""asdf_rs vs Python asdf in one Python process, on files made here (small by default).

    python asdf-python/bench/compare.py [--mib 256] [--items 100000] [--arrays 10000] [--dir /tmp/asdf-rs-bench]
        [--dask] [--keys]

Prints one row per case: best of 3 wall-clock times and the ratio; with ``--keys``, ``key
seconds`` lines instead (what `cargo xtask bench` reads for its Python rows, case 8). Not part
of the test suite (timings do not belong in tests); the numbers depend on the machine and its
load.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

import numpy as np

import asdf
import asdf_rs


def best(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def walk(x):
    n = 0
    stack = [x]
    while stack:
        v = stack.pop()
        n += 1
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256)
    ap.add_argument("--dir", default="/tmp/asdf-rs-bench")
    ap.add_argument("--dask", action="store_true", help="also time a dask sum on 2 worker processes vs 1")
    ap.add_argument("--items", type=int, default=100_000, help="items of the tree case")
    ap.add_argument("--arrays", type=int, default=10_000, help="arrays of the many-arrays case")
    ap.add_argument("--keys", action="store_true", help="print `key seconds` lines for the bench harness")
    args = ap.parse_args()
    os.makedirs(args.dir, exist_ok=True)
    d = lambda name: os.path.join(args.dir, name)  # noqa: E731
    warnings.simplefilter("ignore")
    n = args.mib * (1 << 20) // 8
    rng = np.random.default_rng(0)
    big = np.cumsum(rng.standard_normal(n)).round(2)
    tree = {"items": [{"id": i, "name": f"item{i}", "pos": [i * 0.5, -i, 3.25], "ok": i % 2 == 0} for i in range(args.items)]}
    asdf.AsdfFile(tree).write_to(d("tree.asdf"))
    asdf.AsdfFile({f"a{i}": np.arange(10, dtype=np.float64) + i for i in range(args.arrays)}).write_to(d("many.asdf"))
    asdf_rs.write(d("raw.asdf"), {"a": big})

    def row(key, name, ours, theirs):
        if args.keys:
            print(f"{key}_rs {ours!r}\n{key}_py {theirs!r}", flush=True)
        else:
            print(f"{name:40s} asdf_rs {ours * 1e3:9.1f} ms   asdf {theirs * 1e3:9.1f} ms   {theirs / ours:6.1f}x", flush=True)

    def rs_tree():
        with asdf_rs.open(d("tree.asdf")) as f:
            walk(f.tree)

    def py_tree():
        with asdf.open(d("tree.asdf")) as af:
            walk(af.tree)

    row("tree", f"open + walk a {args.items}-item tree", best(rs_tree), best(py_tree))

    def rs_many():
        with asdf_rs.open(d("many.asdf")) as f:
            for p in f.arrays():
                f[p]

    def py_many():
        with asdf.open(d("many.asdf"), lazy_load=False, memmap=False) as af:
            for k, v in af.tree.items():
                if k.startswith("a"):
                    np.asarray(v)

    row("many", f"open + read {args.arrays} small arrays", best(rs_many), best(py_many))
    for codec in ("zlib", "lz4", "zstd"):
        asdf.AsdfFile({"a": big}).write_to(d(f"{codec}.asdf"), all_array_compression=codec)
        with asdf.open(d(f"{codec}.asdf")) as af:  # the peer really compressed it
            assert af.get_array_compression(af["a"]) == codec, codec

        # Checksums skipped like the peer (Python asdf does not verify them by default).
        def rs_read(c=codec):
            with asdf_rs.open(d(f"{c}.asdf"), validate_checksums=False) as f:
                f["a"].sum()

        def py_read(c=codec):
            with asdf.open(d(f"{c}.asdf"), lazy_load=False, memmap=False) as af:
                np.asarray(af["a"]).sum()

        row(f"read_{codec}", f"read {args.mib} MiB {codec}", best(rs_read), best(py_read))

    def rs_view():
        with asdf_rs.open(d("raw.asdf"), validate_checksums=False) as f:
            f["a"][123]

    def py_view():
        with asdf.open(d("raw.asdf"), memmap=True) as af:
            af["a"][123]

    row("view", f"view {args.mib} MiB raw (one element)", best(rs_view), best(py_view))

    def rs_write():
        asdf_rs.write(d("w_rs.asdf"), {"a": big}, compression="zstd")

    def rs_write_unsynced():
        # A new file each time (one that replaces another is synced regardless); the peer
        # truncates its old file instead, also inside its timing.
        p = d("w_rs_unsynced.asdf")
        if os.path.exists(p):
            os.remove(p)
        asdf_rs.write(p, {"a": big}, compression="zstd", sync=False)

    def py_write():
        asdf.AsdfFile({"a": big}).write_to(d("w_py.asdf"), all_array_compression="zstd")

    theirs = best(py_write, 2)
    row("write_zstd", f"write {args.mib} MiB zstd", best(rs_write, 2), theirs)
    row("write_zstd_unsynced", f"write {args.mib} MiB zstd, unsynced", best(rs_write_unsynced, 2), theirs)
    os.sync()  # what follows starts without those pages still on their way to disk
    with asdf.open(d("w_py.asdf")) as af:
        assert af.get_array_compression(af["a"]) == "zstd"
    if args.dask:
        dask_rows(big, d, args.keys)


def dask_rows(big, d, keys):
    """A dask sum over a chunked, zstd-compressed array: 2 worker processes vs 1, each worker one
    core (one Dask thread and a one-thread rayon pool), as one machine of a cluster would be; with
    its own rayon pool one worker already decodes and checks a chunk on both cores of a 2-core
    machine, and a second worker has nothing left to add."""
    import distributed

    rows = big.size // 8
    asdf_rs.write(d("chunked.asdf"), {"a": asdf_rs.Chunked(big, chunks=(rows,))}, compression="zstd")
    times = {}
    for n in (1, 2):
        with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None, env={"RAYON_NUM_THREADS": "1"}) as cl, distributed.Client(cl) as client:
            with asdf_rs.open(d("chunked.asdf")) as f:
                arr = f.to_dask("a")
                client.compute(arr.sum()).result()  # warm the workers (imports, page cache)
                times[n] = best(lambda: client.compute(arr.sum()).result())
    if keys:
        print(f"dask_2 {times[2]!r}\ndask_1 {times[1]!r}", flush=True)
    else:
        print(f"{'dask sum, chunked zstd, 8 chunks':40s} 2 workers {times[2] * 1e3:9.1f} ms   1 worker {times[1] * 1e3:9.1f} ms   {times[1] / times[2]:6.1f}x", flush=True)


if __name__ == "__main__":
    main()
