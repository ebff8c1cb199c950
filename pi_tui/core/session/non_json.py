"""Values Python's JSON parser accepts but JSON, UTF-8 output and pi do not.

``json.loads`` reads ``NaN``, ``Infinity`` and lone surrogate escapes (``"\\ud800"``); orjson
and JavaScript's ``JSON.parse`` refuse the former, and no UTF-8 output (terminal, HTML export,
provider request) can encode the latter. Lines the strict parser refused are cleaned here before
anything else reads them.
"""

from __future__ import annotations

import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def _clean_scalar(value: Any) -> Any:
    """``_UNCHANGED``, or what to use instead of a value JSON cannot carry: NaN/Infinity become
    null, a string with a lone surrogate (a ``\\ud800`` escape with no pair, which JSON.parse
    accepts but no UTF-8 output can encode) gets U+FFFD in its place."""
    kind = type(value)
    if kind is float:
        return _UNCHANGED if math.isfinite(value) else None
    if kind is str and _SURROGATE.search(value):
        return _SURROGATE.sub("\ufffd", value)
    return _UNCHANGED


_UNCHANGED: Any = object()


def clean_non_json(value: Any, field: str, numbers: list[str], texts: list[str]) -> Any:
    """``value`` with NaN/Infinity read as null and lone surrogates replaced (see
    ``_clean_scalar``); ``numbers`` and ``texts`` receive the field path of each replacement.

    Iterative (a deeply nested value must not exhaust the stack); copies only what changes.
    """
    kind = type(value)
    if kind is not dict and kind is not list:
        new = _clean_scalar(value)
        if new is _UNCHANGED:
            return value
        (texts if kind is str else numbers).append(field)
        return new
    root: list[Any] = [value]
    changed: dict[int, Any] = {}  # id(original container) -> its repaired copy
    order: list[tuple[Any, Any, Any]] = []  # (container, parent, key in parent), parents first
    stack: list[tuple[Any, str, Any, Any]] = [(value, field, root, 0)]
    while stack:
        node, where, parent, key = stack.pop()
        order.append((node, parent, key))
        is_dict = type(node) is dict
        for child_key, child in list(node.items()) if is_dict else enumerate(node):
            path = f"{where}.{child_key}" if is_dict else f"{where}[{child_key}]"
            kind = type(child)
            if kind is dict or kind is list:
                stack.append((child, path, node, child_key))
            else:
                new = _clean_scalar(child)
                if new is not _UNCHANGED:
                    (texts if kind is str else numbers).append(path)
                    changed.setdefault(id(node), node.copy())[child_key] = new
            if is_dict and type(child_key) is str and _SURROGATE.search(child_key):
                texts.append(path)
                copy = changed.setdefault(id(node), node.copy())
                copy[_SURROGATE.sub("\ufffd", child_key)] = copy.pop(child_key)
    if not changed:
        return value
    for node, parent, key in reversed(order):  # children before their parents
        new = changed.get(id(node))
        if new is not None:
            target = parent if parent is root else changed.setdefault(id(parent), parent.copy())
            if type(target) is dict and key not in target:  # the key itself was renamed
                key = _SURROGATE.sub("\ufffd", key)
            target[key] = new
    return root[0]


