"""Tagged tree nodes: a value that keeps its ASDF tag and behaves like the value."""

from __future__ import annotations

from typing import Any


class Tagged:
    """A tree node with a tag that asdf_rs does not convert (``node.tag`` is the full tag URI).

    ``Tagged(tag, value)`` returns a :class:`TaggedDict`, :class:`TaggedList` or
    :class:`TaggedStr` (subclasses of ``dict``, ``list`` and ``str`` that compare equal to the
    plain value) for mappings, sequences and strings, and a :class:`TaggedScalar` for anything
    else. All are instances of ``Tagged``, and :func:`asdf_rs.write` writes the tag back.

    >>> t = Tagged("tag:example.org:thing-1.0.0", {"a": 1})
    >>> t["a"], t.tag, isinstance(t, dict)
    (1, 'tag:example.org:thing-1.0.0', True)
    """

    tag: str
    __slots__ = ()

    def __new__(cls, tag: str, value: Any = None):
        if cls is Tagged:
            if isinstance(value, dict):
                return TaggedDict(tag, value)
            if isinstance(value, (list, tuple)):
                return TaggedList(tag, value)
            if isinstance(value, str):
                return TaggedStr(tag, value)
            return TaggedScalar(tag, value)
        return super().__new__(cls)

    def _untagged(self) -> Any:
        raise NotImplementedError


class TaggedDict(dict, Tagged):
    """A tagged mapping (a ``dict`` with ``.tag``)."""

    def __new__(cls, tag: str, value: Any = ()):
        return dict.__new__(cls)

    def __init__(self, tag: str, value: Any = ()):
        dict.__init__(self, value)
        self.tag = tag

    def _untagged(self) -> dict:
        return dict(self)

    def __repr__(self) -> str:
        return f"Tagged({self.tag!r}, {dict.__repr__(self)})"


class TaggedList(list, Tagged):
    """A tagged sequence (a ``list`` with ``.tag``)."""

    def __new__(cls, tag: str, value: Any = ()):
        return list.__new__(cls)

    def __init__(self, tag: str, value: Any = ()):
        list.__init__(self, value)
        self.tag = tag

    def _untagged(self) -> list:
        return list(self)

    def __repr__(self) -> str:
        return f"Tagged({self.tag!r}, {list.__repr__(self)})"


class TaggedStr(str, Tagged):
    """A tagged string (a ``str`` with ``.tag``)."""

    def __new__(cls, tag: str, value: str = ""):
        s = str.__new__(cls, value)
        s.tag = tag
        return s

    def _untagged(self) -> str:
        return str(self)

    def __repr__(self) -> str:
        return f"Tagged({self.tag!r}, {str.__repr__(self)})"


class TaggedScalar(Tagged):
    """Any other tagged value (number, bool, null): ``.value`` holds it."""

    __slots__ = ("tag", "value")

    def __new__(cls, tag: str, value: Any = None):
        return object.__new__(cls)

    def __init__(self, tag: str, value: Any = None):
        self.tag = tag
        self.value = value

    def _untagged(self) -> Any:
        return self.value

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, TaggedScalar):
            return self.tag == other.tag and self.value == other.value
        return self.value == other

    def __hash__(self) -> int:
        return hash((self.tag, self.value))

    def __repr__(self) -> str:
        return f"Tagged({self.tag!r}, {self.value!r})"
