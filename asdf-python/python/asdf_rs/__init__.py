"""ASDF files from Python on the asdf-rs Rust engine.

>>> import numpy as np, asdf_rs
>>> asdf_rs.write("example.asdf", {"sci": {"data": np.arange(6.0).reshape(2, 3)}})
>>> with asdf_rs.open("example.asdf") as f:
...     data = f["/sci/data"]          # a read-only NumPy view of the memory-mapped file
...     tree = f.tree                  # plain Python values, lazy arrays for ndarrays
>>> float(data.sum())
15.0

* :func:`open` (a path, or an ``s3://``, ``gs://``, ``az://`` or ``https://`` URL read by
  ranged requests) gives an :class:`AsdfFile`: ``f.tree`` (dict, list, str, int, float, bool, None,
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
import re
import sys
import urllib.parse
import urllib.request
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
    "read_awkd",
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
    """An open ASDF file: memory-mapped, or read by ranged requests when opened by URL. Use
    :func:`open` to make one.

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
        """The path or URL the file was opened from."""
        return self._path

    @property
    def remote(self) -> bool:
        """Whether the file was opened by URL (read by ranged requests, arrays always copies)."""
        return self._native.remote

    @property
    def traffic(self) -> "tuple[int, int] | None":
        """For a file opened by URL: ``(requests, bytes)`` received so far; ``None`` otherwise."""
        return self._native.traffic()

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
        ndarray (a masked array when it has a mask), an ``ak.Array`` for an awkward array, the
        converted value otherwise."""
        pointer = _pointer(key)
        kind = self._native.kind(pointer)
        if kind == "awkward":
            return self.awkward(pointer)
        if kind is not None:
            return self.read(pointer)
        return self._convert(pointer)

    def awkward(self, pointer: str) -> Any:
        """The awkward array stored at ``pointer`` (an awkward0 or awkward 2 node, as
        ``asdftool convert x.awkd x.asdf`` or :func:`write` store them) as an ``ak.Array``."""
        import awkward as ak

        form, length, buffers = self._native.awkward(_pointer(pointer))
        return ak.from_buffers(form, length, buffers)

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
        otherwise. Each task opens the file itself (by path or URL, with the options it was
        opened with), so a ``dask.distributed`` cluster reads one file from many worker
        processes; a task over a remote file fetches only the chunks or rows of its own piece.
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


#: A URL scheme (``s3://``, ``https://``...): such paths are opened by ranged requests.
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def _local_path(url: str) -> str:
    """The local path of a ``file://`` URL."""
    parsed = urllib.parse.urlparse(url)
    if parsed.netloc not in ("", "localhost"):
        raise ValueError(f"{url!r}: file URLs name a local path (file:///path)")
    return urllib.request.url2pathname(parsed.path)


def open(
    path: "str | os.PathLike",
    *,
    validate_checksums: bool = True,
    untrusted: bool = False,
    endpoint_url: "str | None" = None,
    region: "str | None" = None,
    anonymous: bool = False,
    timeout: "float | None" = None,
    retries: "int | None" = None,
    storage_options: "dict | None" = None,
) -> AsdfFile:
    """Opens the ASDF file at ``path``: a local path (memory-mapped; nothing but the tree is
    read yet) or a URL (``s3://bucket/key``, ``gs://``, ``az://``, ``https://``; ``file://`` is a
    local path).

    * ``validate_checksums``: verify each block's MD5 when its data is first used (Python
      asdf's convention for old files is accepted too). ``False`` makes zero-copy access O(1).
    * ``untrusted``: resource ceilings for files from untrusted sources (1 GiB per decoded
      block or array, 4 GiB per file, bounded YAML aliases and scalars).

    A URL is read by ranged requests: opening fetches the header, the tree and the block index
    (two requests for most files), each array only the blocks it needs, and a slice of a
    chunked or uncompressed array only the chunks or rows it covers. Credentials, region and
    endpoint come from the usual environment variables (``AWS_ACCESS_KEY_ID``,
    ``AWS_ENDPOINT_URL``, ``GOOGLE_APPLICATION_CREDENTIALS``, ``AZURE_STORAGE_ACCOUNT_NAME``...)
    and from these options:

    * ``endpoint_url``: an S3-compatible server (MinIO, Ceph, a local test server).
    * ``region``: the S3 region.
    * ``anonymous``: unsigned requests, for public buckets.
    * ``timeout`` (seconds per request, default 30) and ``retries`` (default 3).
    * ``storage_options``: further settings of the Rust ``object_store`` client by their
      builder keys, e.g. ``{"aws_access_key_id": ..., "aws_secret_access_key": ...}``.

    Raises ``FileNotFoundError`` or :class:`AsdfError` (with the engine's message).
    """
    path = os.fspath(path)
    options = {"validate_checksums": validate_checksums, "untrusted": untrusted}
    if _URL.match(path) and path[:7].lower() == "file://":
        path = _local_path(path)
    if not _URL.match(path):
        native = _native.open_native(path, **options)
        return AsdfFile(native, path, options)
    remote = {
        "endpoint_url": endpoint_url,
        "region": region,
        "anonymous": anonymous,
        "timeout": timeout,
        "retries": retries,
        "storage_options": tuple(sorted((str(k), str(v)) for k, v in dict(storage_options or {}).items())),
    }
    options.update(remote)
    native = _open_remote(path, options)
    return AsdfFile(native, path, options)


def _open_remote(url: str, options: dict) -> Any:
    kwargs = dict(options)
    kwargs["config"] = list(kwargs.pop("storage_options"))
    return _native.open_remote(url, **kwargs)


def write(
    path: "str | os.PathLike",
    tree: dict,
    *,
    compression: "str | None" = None,
    version: "str | None" = None,
    align: int = 64,
    sync: bool = True,
) -> None:
    """Writes ``tree`` to ``path`` crash-safely (a temporary file, fsync, rename).

    ``tree`` holds dicts, lists/tuples, ``str``, ``int`` (beyond 64 bits as ``core/integer``),
    ``float``, ``complex``, ``bool``, ``None``, ``bytes``, ``datetime``/``date``, NumPy arrays
    (numbers, ``S``/``U`` strings, packed structured dtypes), ``numpy.ma.MaskedArray``,
    NumPy scalars, :class:`Tagged` values, :class:`Chunked` arrays and ``ak.Array`` (stored as
    awkward 2 buffers, each an ASDF block; read back with ``f[pointer]``).

    * ``compression``: block compression of every array (``"zlib"``, ``"bzp2"``, ``"lz4"``,
      ``"zstd"``...; ``None`` keeps arrays uncompressed so readers can map them).
    * ``version``: the ASDF Standard version written (default 1.6.0).
    * ``align``: block data starts at a multiple of this many bytes in the file (by enlarging
      block headers, which every reader accepts), so that uncompressed arrays can be viewed in
      place; 0 writes Python asdf's unaligned layout.
    * ``sync``: wait until the file is on disk before returning (the default). ``False`` leaves
      a new file's bytes to the kernel, as ``asdf.AsdfFile.write_to`` and ``numpy.save`` do: a
      power loss soon after may leave it empty or short. A file that replaces an existing one is
      synced either way, so data already on disk is never put at risk.

    C-contiguous arrays in native byte order are compressed and written from their own memory
    (no copy), with the GIL released: do not change them from another thread until ``write``
    returns.
    """
    _native.write_native(
        os.fspath(path),
        tree,
        Tagged,
        Chunked,
        _awkward_parts,
        compression=compression,
        version=version,
        align=align,
        sync=sync,
    )


def _awkward_parts(obj: Any) -> Any:
    """``(form, length, buffers)`` of an ``ak.Array`` (``ak.to_buffers``, buffers as bytes),
    ``None`` for anything else."""
    ak = sys.modules.get("awkward")
    if ak is None or not isinstance(obj, ak.Array):
        return None
    form, length, container = ak.to_buffers(obj, byteorder="<")
    buffers = {k: np.ascontiguousarray(v).tobytes() for k, v in container.items()}
    return form.to_json(), int(length), buffers


def read_awkd(path: "str | os.PathLike", name: "str | None" = None) -> Any:
    """The awkward arrays of the awkward0 ``.awkd`` file at ``path`` as ``ak.Array``: the one
    named ``name``, or when ``name`` is ``None`` the only one (a dict by name when there are
    several). Nothing in the file is executed: its functions are checked against a whitelist."""
    import awkward as ak

    path = os.fspath(path)
    names = [name] if name is not None else _native.awkd_names(path)
    arrays = {n: ak.from_buffers(*_native.awkd_buffers(path, n)) for n in names}
    if name is not None or len(arrays) == 1:
        return next(iter(arrays.values()))
    return arrays
