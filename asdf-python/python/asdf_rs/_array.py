"""Lazy arrays of an open file, and the marker for writing chunked arrays."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


class Array:
    """An array of an open file, read only when its values are needed.

    ``shape``, ``dtype``, ``ndim`` and ``size`` come from the tree. ``numpy.asarray(a)`` (or
    ``a[...]``) reads it (see :meth:`asdf_rs.AsdfFile.read`). Indexing a chunked array with
    integers and slices decodes only the chunks the selection touches, and indexing an array of
    a remote file fetches only what covers the selection (its chunks, or the rows of an
    uncompressed block); other arrays are read whole first (for uncompressed ones that is a
    zero-copy view, so slicing costs nothing).
    """

    def __init__(self, file: Any, pointer: str):
        self._file = file
        self._pointer = pointer
        self._info_cache: "dict | None" = None

    def _info(self) -> dict:
        if self._info_cache is None:
            self._info_cache = self._file._native.array_info(self._pointer)
        return self._info_cache

    @property
    def pointer(self) -> str:
        """The array's JSON Pointer in the tree."""
        return self._pointer

    @property
    def shape(self) -> tuple:
        shape = self._info()["shape"]
        if shape is None:  # inline or streamed: known once read
            return self.read().shape
        return tuple(shape)

    @property
    def dtype(self) -> np.dtype:
        dtype = self._info()["dtype"]
        if dtype is None:
            return self.read().dtype
        return dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def chunked(self) -> bool:
        """Whether the array is chunked: a chunked ndarray (``core/chunked-ndarray-1.0.0``) or an
        asdf-zarr array (whose regions read only the chunks they touch)."""
        return self._info()["kind"] == "chunked"

    def __len__(self) -> int:
        return self.shape[0]

    def read(self) -> np.ndarray:
        """The whole array (as :meth:`asdf_rs.AsdfFile.read`)."""
        return self._file.read(self._pointer)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        a = self.read()
        if dtype is not None:
            a = a.astype(dtype)
        return np.array(a, copy=True) if copy else a

    def __getitem__(self, key: Any) -> Any:
        # Region reads (numbers only): the chunks a selection touches of a chunked array; the
        # rows it covers of a remote file's array, which is never read whole for a slice.
        partial = self.chunked or (self._file.remote and self._info()["shape"] is not None)
        if partial and self.dtype.kind in "biufc":
            region = _region(key, self.shape)
            if region is not None:
                starts, stops, rest = region
                part = self._file._native.read_region(self._pointer, starts, stops)
                return part[rest]
        return self.read()[key]

    def __repr__(self) -> str:
        return f"<asdf_rs.Array {self._pointer!r} shape={self.shape} dtype={self.dtype}>"


def _region(key: Any, shape: Sequence[int]):
    """For a key of integers and step-1 slices: the bounding region ``(starts, stops)`` and the
    key that selects the result from it. ``None`` for any other key (read whole, then index)."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(k is Ellipsis for k in key):
        i = next(i for i, k in enumerate(key) if k is Ellipsis)
        fill = (slice(None),) * (len(shape) - len(key) + 1)
        key = key[:i] + fill + key[i + 1 :]
    if len(key) > len(shape):
        return None
    key = key + (slice(None),) * (len(shape) - len(key))
    starts, stops, rest = [], [], []
    for k, dim in zip(key, shape):
        if isinstance(k, (int, np.integer)) and not isinstance(k, bool):
            i = int(k)
            if i < 0:
                i += dim
            if not 0 <= i < dim:
                raise IndexError(f"index {int(k)} is out of bounds for an axis of size {dim}")
            starts.append(i)
            stops.append(i + 1)
            rest.append(0)
        elif isinstance(k, slice):
            start, stop, step = k.indices(dim)
            if step != 1:
                return None
            stop = max(start, stop)
            starts.append(start)
            stops.append(stop)
            rest.append(slice(None))
        else:
            return None
    return starts, stops, tuple(rest)


class Chunked:
    """Marks an array to be written as a chunked ndarray (each chunk of shape ``chunks`` its
    own block, compressed and read independently). Only ASDF.jl and asdf-rs read this tag;
    Python asdf keeps it as an unknown tagged node.

    >>> import numpy as np
    >>> c = Chunked(np.zeros((100, 100)), chunks=(25, 100))
    """

    def __init__(self, array: Any, chunks: Sequence[int]):
        self.array = np.asarray(array)
        self.chunks = [int(c) for c in chunks]
        if len(self.chunks) != self.array.ndim:
            raise ValueError(
                f"chunks {tuple(self.chunks)} must have one size per dimension of shape {self.array.shape}"
            )
