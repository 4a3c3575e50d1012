"""``AsdfFile.info()`` and ``AsdfFile.search()``."""

from __future__ import annotations

from typing import Any, Iterator

from ._array import Array
from ._tagged import Tagged


def _token(key: Any) -> str:
    return str(key).replace("~", "~0").replace("/", "~1")


def walk(node: Any, pointer: str = "", key: Any = None, seen: "set | None" = None) -> Iterator[tuple]:
    """``(pointer, key, node, depth)`` for every node, parents first (shared nodes once)."""
    seen = set() if seen is None else seen
    stack = [(pointer, key, node, 0)]
    while stack:
        p, k, n, depth = stack.pop()
        yield p, k, n, depth
        if isinstance(n, (dict, list)):
            if id(n) in seen:
                continue
            seen.add(id(n))
            items = n.items() if isinstance(n, dict) else enumerate(n)
            children = [(f"{p}/{_token(ck)}", ck, cv, depth + 1) for ck, cv in items]
            stack.extend(reversed(children))


def _describe(node: Any) -> str:
    if isinstance(node, Array):
        return f"Array {node.shape} {node.dtype}"
    tag = f" <{node.tag}>" if isinstance(node, Tagged) else ""
    if isinstance(node, dict):
        return f"dict{tag} ({len(node)} keys)"
    if isinstance(node, list):
        return f"list{tag} ({len(node)} items)"
    text = repr(node.value if hasattr(node, "value") and isinstance(node, Tagged) else node)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(node).__name__}{tag}: {text}"


def info(file: Any, max_rows: int = 200) -> str:
    lines = []
    for i, (_, key, node, depth) in enumerate(walk(file.tree)):
        if i >= max_rows:
            lines.append(f"... (more than {max_rows} nodes; raise max_rows to see them)")
            break
        name = "root" if key is None else str(key)
        lines.append(f"{'  ' * depth}{name}: {_describe(node)}")
    return "\n".join(lines)


def search(file: Any, key: Any, type_: Any, value: Any) -> Iterator[tuple]:
    for pointer, k, node, _ in walk(file.tree):
        if key is not None:
            if callable(key):
                if not key(k):
                    continue
            elif k is None or str(key) not in str(k):
                continue
        if type_ is not None and not isinstance(node, type_):
            continue
        if value is not None:
            if callable(value):
                if not value(node):
                    continue
            elif isinstance(node, (Array, dict, list)) or node != value:
                continue
        yield pointer, node
