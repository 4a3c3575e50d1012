"""Dask arrays over arrays of ASDF files: one task per chunk, each opening the file itself."""

from __future__ import annotations

import collections
import os
import threading
from typing import Any

import numpy as np

from ._array import _region

#: Slab size for uncompressed arrays cut along their first axis.
TARGET_BYTES = 64 << 20

_OPEN: "collections.OrderedDict[tuple, Any]" = collections.OrderedDict()
_OPEN_LOCK = threading.Lock()
_OPEN_MAX = 4


def _open(path: str, options: dict):
    """The file at ``path`` (a path or URL), opened once per process and version of the file (a
    small LRU: the tasks of one worker share the memory map or the remote file's fetched tree
    and block headers)."""
    from . import _URL, open as open_file

    if _URL.match(path):
        key = (path, tuple(sorted(options.items())))
    else:
        st = os.stat(path)
        key = (path, st.st_mtime_ns, st.st_size, tuple(sorted(options.items())))
    with _OPEN_LOCK:
        f = _OPEN.get(key)
        if f is not None:
            _OPEN.move_to_end(key)
            return f
    f = open_file(path, **options)
    with _OPEN_LOCK:
        _OPEN[key] = f
        while len(_OPEN) > _OPEN_MAX:
            _OPEN.popitem(last=False)
    return f


def _cuts(dim: int, bounds: "list[tuple[int, int]]") -> tuple:
    cuts = {0, dim}
    for a, b in bounds:
        cuts.add(min(a, dim))
        cuts.add(min(b, dim))
    cuts = sorted(cuts)
    sizes = tuple(b - a for a, b in zip(cuts, cuts[1:]))
    return sizes or (0,)


def file_chunks(info: dict, shape: tuple, itemsize: int, rows: "int | None") -> tuple:
    """Dask chunks following the file's layout (see :meth:`asdf_rs.AsdfFile.to_dask`)."""
    if not shape:
        return ()
    if info["kind"] == "chunked":
        return tuple(
            _cuts(dim, [(s[ax], s[ax] + c[ax]) for s, c in info["chunks"]])
            for ax, dim in enumerate(shape)
        )
    rest = tuple((d,) for d in shape[1:])
    if info["compressed"] or info["masked"]:
        return ((shape[0],),) + rest
    if rows is None:
        row_bytes = itemsize * int(np.prod(shape[1:], dtype=np.int64))
        rows = max(1, TARGET_BYTES // max(row_bytes, 1))
    rows = max(1, int(rows))
    first = [rows] * (shape[0] // rows)
    if shape[0] % rows:
        first.append(shape[0] % rows)
    return (tuple(first) or (0,),) + rest


class _Source:
    """What each Dask task reads from: picklable (a path or URL and a pointer, no open file).
    ``partial``: read each piece as a region (chunked arrays, remote files) rather than slicing
    the whole array (a zero-copy view for uncompressed local arrays)."""

    def __init__(self, path: str, pointer: str, shape: tuple, dtype: np.dtype, options: dict, partial: bool):
        self.path = path
        self.pointer = pointer
        self.shape = shape
        self.dtype = dtype
        self.ndim = len(shape)
        self.options = options
        self.partial = partial

    def __getitem__(self, key: Any) -> Any:
        f = _open(self.path, self.options)
        if self.partial and self.dtype.kind in "biufc":
            region = _region(key, self.shape)
            if region is not None:
                starts, stops, rest = region
                return f._native.read_region(self.pointer, starts, stops)[rest]
        return f.read(self.pointer)[key]


def to_dask(file: Any, pointer: str, chunks: Any = None):
    import dask.array as da
    from dask.base import tokenize

    info = file._native.array_info(pointer)
    arr = file.array(pointer)
    shape, dtype = tuple(arr.shape), np.dtype(arr.dtype)
    if file.remote:
        path, version = file.path, file._native.version()
    else:
        path = os.path.abspath(file.path)
        st = os.stat(path)
        version = (st.st_mtime_ns, st.st_size)
    partial = info["kind"] == "chunked" or (file.remote and not info["compressed"] and not info["masked"])
    source = _Source(path, pointer, shape, dtype, dict(file._options), partial)
    rows = chunks if isinstance(chunks, int) else None
    if chunks is None or rows is not None:
        chunks = file_chunks(info, shape, dtype.itemsize, rows)
    name = "asdf-rs-" + tokenize(path, pointer, version, chunks)
    meta = np.ma.empty((0,) * len(shape), dtype) if info["masked"] else np.empty((0,) * len(shape), dtype)
    return da.from_array(source, chunks=chunks, name=name, lock=False, asarray=False, fancy=False, meta=meta)
