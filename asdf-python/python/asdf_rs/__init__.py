"""ASDF files from Python on the asdf-rs Rust engine.

>>> import numpy as np, asdf_rs
>>> asdf_rs.write("example.asdf", {"sci": {"data": np.arange(6.0).reshape(2, 3)}})
>>> with asdf_rs.open("example.asdf") as f:
...     data = f["/sci/data"]          # a read-only NumPy view of the memory-mapped file
...     tree = f.tree                  # plain Python values, lazy arrays for ndarrays
>>> float(data.sum())
15.0

* :func:`open` gives an :class:`AsdfFile`: ``f.tree`` (dict, list, str, int, float, bool, None,
  bytes, datetime, complex; :class:`Tagged` for other tagged nodes; :class:`Array` for arrays),
  ``f[pointer]`` (a NumPy array, ``numpy.ma.MaskedArray`` when the array has a mask),
  ``f.array(pointer)`` (a lazy :class:`Array`), ``f.to_dask(pointer)``, ``f.info()``,
  ``f.search(...)``, ``f.validate()``.
* :func:`write` writes dicts, lists, scalars, NumPy (masked, string, structured) arrays,
  :class:`Tagged` values and :class:`Chunked` arrays, crash-safely (a temporary file renamed
  over the target).

Engine errors are raised as :class:`AsdfError` (a ``ValueError``) carrying the engine's message
(file, block, byte offset); a missing file raises ``FileNotFoundError``.
"""

from __future__ import annotations

import os
from typing import Any, Iterator

import numpy as np

from . import _native
from ._array import Array, Chunked
from ._tagged import Tagged, TaggedDict, TaggedList, TaggedScalar, TaggedStr

AsdfError = _native.AsdfError

__all__ = [
    "AsdfError",
    "AsdfFile",
    "Array",
    "Chunked",
    "Tagged",
    "TaggedDict",
    "TaggedList",
    "TaggedScalar",
    "TaggedStr",
    "open",
    "write",
]


def _pointer(key: str) -> str:
    """``"sci/data"`` and ``"/sci/data"`` both name ``/sci/data`` (a JSON Pointer)."""
    if not isinstance(key, str):
        raise TypeError(f"array names are JSON Pointer strings, not {type(key).__name__}")
    if key == "" or key.startswith("/"):
        return key
    return "/" + key


class AsdfFile:
    """An open ASDF file (memory-mapped). Use :func:`open` to make one.

    Closing the file (or leaving its ``with`` block) drops the file object's reference to the
    memory map; arrays already read keep it alive and stay valid.
    """

    def __init__(self, native: Any, path: str, options: dict):
        self._native = native
        self._path = path
        self._options = options
        self._tree: Any = None

    # Context manager -----------------------------------------------------------------------
    def __enter__(self) -> "AsdfFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Closes the file; arrays read from it stay valid."""
        self._native.close()
        self._tree = None

    @property
    def closed(self) -> bool:
        return self._native.closed

    @property
    def path(self) -> str:
        """The path the file was opened from."""
        return self._path

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"<asdf_rs.AsdfFile {self._path!r} ({state})>"

    # Tree ----------------------------------------------------------------------------------
    @property
    def tree(self) -> Any:
        """The tree as plain Python values (converted once, then cached).

        Mappings are ``dict``, sequences ``list``; YAML scalars become ``str``, ``int`` (any
        size), ``float``, ``bool``, ``None``; timestamps ``datetime``/``date``; ``!!binary``
        ``bytes``; ``core/complex`` ``complex``; ``core/integer`` ``int``; ndarrays lazy
        :class:`Array` objects; any other tagged node a :class:`Tagged` value keeping its tag.
        """
        if self._tree is None:
            self._tree = self._convert("")
        return self._tree

    def _convert(self, pointer: str) -> Any:
        return self._native.tree(Tagged, self._make_array, pointer)

    def _make_array(self, pointer: str) -> "Array":
        return Array(self, pointer)

    @property
    def standard_version(self) -> str:
        """The file's ``#ASDF_STANDARD`` version."""
        return self._native.standard_version()

    @property
    def warnings(self) -> list:
        """Non-fatal oddities found while reading."""
        return self._native.warnings()

    # Arrays --------------------------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        """The node at a JSON Pointer (``"sci/data"`` or ``"/sci/data"``): a NumPy array for an
        ndarray (a masked array when it has a mask), the converted value otherwise."""
        pointer = _pointer(key)
        if self._native.kind(pointer) is not None:
            return self.read(pointer)
        return self._convert(pointer)

    def read(self, pointer: str) -> np.ndarray:
        """The array at ``pointer`` as a NumPy array.

        Uncompressed, aligned arrays in this machine's byte order are zero-copy, read-only views
        of the memory map (their ``base`` keeps the file mapped); others are decoded with the
        GIL released (chunked arrays in parallel). Arrays with a mask (a mask array, a sentinel
        value or inline nulls) come back as ``numpy.ma.MaskedArray``.

        As with ``numpy.memmap``, views rely on no other process truncating or rewriting the
        file in place while they are alive (:func:`write` replaces a file by renaming a new one
        over it, which leaves existing maps valid; writers that truncate in place do not).
        """
        data, mask = self._native.read(_pointer(pointer))
        if mask is not None:
            return np.ma.MaskedArray(data, mask=mask)
        return data

    def array(self, pointer: str) -> "Array":
        """A lazy :class:`Array` for the ndarray at ``pointer`` (nothing is read yet)."""
        pointer = _pointer(pointer)
        self._native.array_info(pointer)  # raises for a missing node or a non-array
        return Array(self, pointer)

    def arrays(self) -> list:
        """JSON Pointers of every array in the tree, in tree order."""
        return self._native.arrays()

    def to_dask(self, pointer: str, chunks: Any = None):
        """A ``dask.array.Array`` over the array at ``pointer``.

        Its chunks follow the file: the chunk grid of a chunked ndarray, slabs along the first
        axis (about 64 MiB each, or ``chunks`` rows) of an uncompressed block, the whole block
        otherwise. Each task opens the file itself (by path), so a ``dask.distributed`` cluster
        reads one file from many worker processes.
        """
        from ._dask import to_dask

        return to_dask(self, _pointer(pointer), chunks)

    # Inspection ----------------------------------------------------------------------------
    def info(self, max_rows: int = 200) -> str:
        """A readable outline of the tree (keys, scalar values, array shapes and dtypes)."""
        from ._info import info

        return info(self, max_rows)

    def search(self, key: Any = None, type: Any = None, value: Any = None) -> Iterator[tuple]:
        """Nodes of the tree matching every given criterion: ``key`` (a substring of the key,
        or a callable), ``type`` (a class: ``Array``, ``dict``, ``str``...), ``value`` (equal
        to, or a callable). Yields ``(pointer, node)``."""
        from ._info import search

        return search(self, key, type, value)

    def validate(self) -> None:
        """Checks the tree against the rules of its core tags (datatypes, shapes, strides,
        required keys, tag versions); raises :class:`AsdfError` listing every violation."""
        violations = self._native.validate()
        if violations:
            lines = [f"{p or '/'}: {rule}: {msg}" for p, rule, msg in violations]
            raise AsdfError("the tree is not valid ASDF:\n" + "\n".join(lines))


def open(path: "str | os.PathLike", *, validate_checksums: bool = True, untrusted: bool = False) -> AsdfFile:
    """Opens the ASDF file at ``path`` (memory-mapped; nothing but the tree is read yet).

    * ``validate_checksums``: verify each block's MD5 when its data is first used (Python
      asdf's convention for old files is accepted too). ``False`` makes zero-copy access O(1).
    * ``untrusted``: resource ceilings for files from untrusted sources (1 GiB per decoded
      block or array, 4 GiB per file, bounded YAML aliases and scalars).

    Raises ``FileNotFoundError`` or :class:`AsdfError` (with the engine's message).
    """
    path = os.fspath(path)
    options = {"validate_checksums": validate_checksums, "untrusted": untrusted}
    native = _native.open_native(path, **options)
    return AsdfFile(native, path, options)


def write(
    path: "str | os.PathLike",
    tree: dict,
    *,
    compression: "str | None" = None,
    version: "str | None" = None,
    align: int = 64,
) -> None:
    """Writes ``tree`` to ``path`` crash-safely (a temporary file, fsync, rename).

    ``tree`` holds dicts, lists/tuples, ``str``, ``int`` (beyond 64 bits as ``core/integer``),
    ``float``, ``complex``, ``bool``, ``None``, ``bytes``, ``datetime``/``date``, NumPy arrays
    (numbers, ``S``/``U`` strings, packed structured dtypes), ``numpy.ma.MaskedArray``,
    NumPy scalars, :class:`Tagged` values and :class:`Chunked` arrays.

    * ``compression``: block compression of every array (``"zlib"``, ``"bzp2"``, ``"lz4"``,
      ``"zstd"``...; ``None`` keeps arrays uncompressed so readers can map them).
    * ``version``: the ASDF Standard version written (default 1.6.0).
    * ``align``: block data starts at a multiple of this many bytes in the file (by enlarging
      block headers, which every reader accepts), so that uncompressed arrays can be viewed in
      place; 0 writes Python asdf's unaligned layout.
    """
    _native.write_native(
        os.fspath(path), tree, Tagged, Chunked, compression=compression, version=version, align=align
    )
